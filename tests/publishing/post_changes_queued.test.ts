// A post's change after its first publish owes its sync in its own transaction (ADR 0098): a worker lost after the
// change committed and before the drainer was woken re-runs the step, which then finds nothing to change, and the
// sync is still owed; the next kick carries it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import {
  arabicPermalink,
  waitForPostLink,
  waitForPostWorkflow,
  wordpressEvent,
} from '../../devkit/harness/wordpress_events.ts';
import type { PostEvent } from '../../lib/publishing/post_event.ts';
import { applyPostUpdate, markGone } from '../../lib/publishing/post_lifecycle.ts';
import { createWorkerDeps } from '../../workers/worker_deps.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
});
after(async () => {
  await h.close();
});

/** The event as the post's workflow receives it from the webhook. */
function asPostEvent(body: ReturnType<typeof wordpressEvent>): PostEvent {
  return {
    deliveryId: body.id,
    event: body.event,
    site: body.site,
    postId: body.postId,
    occurredAt: body.occurredAt,
    ...(body.permalink !== undefined ? { permalink: body.permalink } : {}),
  };
}

async function queued(code: string): Promise<{ reason: string } | undefined> {
  const [row] = await h.db.sql<{ reason: string }[]>`SELECT reason FROM link_sync_queue WHERE code = ${code}`;
  return row;
}

describe("a post's later change and its owed sync", () => {
  test('the change and its queue row commit together; a re-run of the step keeps the row; the next kick drains it', async () => {
    const postId = 8700;
    const worker = await h.startWorker();
    assert.equal((await h.webhook(wordpressEvent('post.published', { postId }))).status, 202);
    const link = await waitForPostLink(h, 'news', postId, (l) => l.status === 'active');
    await waitForPostWorkflow(h, 'news', postId);
    await worker.stop();

    // The worker's own deps, without a worker: the step as the post's workflow runs it, twice (a re-run).
    const deps = createWorkerDeps(h.config, {
      sql: h.db.sql,
      logger: h.logger,
      resolver: h.deps.resolver,
      servingStore: h.deps.servingStore,
    });
    const moved = arabicPermalink(postId, '-moved');
    const update = asPostEvent(wordpressEvent('post.updated', { postId, permalink: moved }));
    const first = await applyPostUpdate(deps, { event: update, code: link.code, queueSync: true });
    assert.deepEqual([first.outcome, first.changes], ['changed', ['url']]);
    assert.deepEqual(await queued(link.code), { reason: 'post.updated: url changed' });
    const again = await applyPostUpdate(deps, { event: update, code: link.code, queueSync: true });
    assert.equal(again.outcome, 'unchanged');
    assert.deepEqual(await queued(link.code), { reason: 'post.updated: url changed' }, 'still owed');

    // Without queueSync (an execution from before the change) nothing is queued: its workflow signals sync:{code}.
    const unpublish = asPostEvent(wordpressEvent('post.unpublished', { postId }));
    await h.db.sql`DELETE FROM link_sync_queue WHERE code = ${link.code}`;
    const gone = await markGone(deps, { ...unpublish, workflowId: `publish:news:${postId}` });
    assert.equal(gone.outcome, 'changed');
    assert.equal(await queued(link.code), undefined);
    const republish = asPostEvent(wordpressEvent('post.published', { postId, permalink: moved }));
    const back = await applyPostUpdate(deps, { event: republish, code: link.code, queueSync: true });
    assert.deepEqual(back.changes, ['status']);
    assert.deepEqual(await queued(link.code), { reason: 'post.published: status changed' });

    // The next kick (any post event, bulk change or the worker's start) carries it.
    await h.startWorker();
    await h.deps.workflows.kickSyncQueue('test: the next kick');
    await eventually(async () => ((await queued(link.code)) === undefined ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the owed sync drained',
    });
  });
});
