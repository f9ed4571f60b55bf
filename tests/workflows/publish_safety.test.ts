import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { workflowExists } from '../../devkit/harness/temporal.ts';
import {
  waitForPostLink,
  waitForPostSynced,
  waitForPostWorkflow,
  wordpressEvent,
} from '../../devkit/harness/wordpress_events.ts';
import { getSyncWorkflowId } from '../../workflows/contract.ts';

// The safety scan inside the publish workflow (no vendor configured: the in-house front only).
let h: Harness;
before(async () => {
  h = await createHarness();
  await h.startWorker();
  assert.equal(
    (await h.api('/api/v1/blocklist', { method: 'POST', json: { pattern: 'bad-news.example' } })).status,
    201,
  );
});
after(async () => {
  await h.close();
});

async function publish(
  postId: number,
  permalink: string,
  event: 'post.published' | 'post.updated' = 'post.published',
) {
  const res = await h.webhook(wordpressEvent(event, { postId, permalink }));
  assert.equal(res.status, 202, await res.clone().text());
  return (await waitForPostWorkflow(h, 'news', postId)) as { code: string | null; applied: string[] };
}

describe('publishPostWorkflow safety scan', () => {
  test('a blocked permalink is never activated: the link stays pending (404) with its verdict', async () => {
    const result = await publish(9001, 'https://bad-news.example/2026/story/');
    assert.deepEqual(result.applied, ['post.published: blocked by the safety scan']);
    const [row] = await h.db
      .sql`SELECT status, safety, safety_reason FROM links WHERE code = ${result.code!}`;
    assert.deepEqual([row!.status, row!.safety], ['pending', 'blocked']);
    assert.match(row!.safety_reason as string, /blocklist as bad-news.example/);
    assert.equal((await h.api('/api/v1/links/by-post/news/9001')).status, 404);
    assert.equal((await h.app.request(`/${result.code}`)).status, 404);
  });

  test('a look-alike permalink publishes behind the interstitial', async () => {
    const result = await publish(9002, 'https://nеws.example/2026/story/'); // Cyrillic е
    assert.deepEqual(result.applied, [`post.published: active as ${result.code}`]);
    const link = await waitForPostLink(h, 'news', 9002, (l) => l.status === 'active');
    assert.equal((link as unknown as { safety: string }).safety, 'warn');
    assert.equal((await h.app.request(`/${link.code}`)).status, 200);
  });

  test('a permalink moved onto a blocked host is scanned at once: 451', async () => {
    const first = await publish(9003, 'https://news.example/2026/fine/');
    const code = first.code!;
    assert.equal((await h.app.request(`/${code}`)).status, 301);
    const moved = await publish(9003, 'https://bad-news.example/2026/moved/', 'post.updated');
    assert.equal(moved.applied.at(-1), 'post.updated: url');
    await waitForPostSynced(h, 'news', 9003, code);
    assert.equal((await h.app.request(`/${code}`)).status, 451);
    // The new verdict went with the change through the sync queue, not through a workflow of the link's own.
    assert.equal(await workflowExists(h.temporal.client, getSyncWorkflowId(code)), false);
    const [row] = await h.db.sql<{ reason: string }[]>`
      SELECT reason FROM audit_log WHERE code = ${code} AND action = 'link.safety_changed' ORDER BY id DESC LIMIT 1`;
    assert.match(row!.reason, /^scan publish:news:9003/);
  });
});
