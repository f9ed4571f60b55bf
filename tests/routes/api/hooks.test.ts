import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHarness, eventually, type Harness } from '../../../devkit/harness/harness.ts';
import { recordHistory } from '../../../devkit/harness/histories.ts';
import { createLogger } from '../../../lib/shared/logger.ts';
import { createTemporalClient } from '../../../lib/temporal/temporal_client.ts';
import { createWorkflowGateway } from '../../../lib/temporal/workflow_gateway.ts';
import { createApp } from '../../../routes/app.ts';
import { getFreePort } from '../../../scripts/dev_server.ts';

let h: Harness;
before(async () => {
  h = await createHarness();
  await h.startWorker();
});
after(async () => {
  await h.close();
});

let nextPost = 1000;
function publishEvent(overrides: Record<string, unknown> = {}) {
  const postId = nextPost++;
  return {
    id: `delivery-${postId}-${Date.now()}`,
    event: 'post.published',
    site: 'news',
    postId,
    permalink: `https://news.example/2026/11/%d8%b9%d8%a7%d8%ac%d9%84-${postId}/`,
    title: 'عاجل',
    occurredAt: new Date().toISOString(),
    ...overrides,
  };
}

async function linkOfPost(site: string, postId: number) {
  return eventually(
    async () => {
      const res = await h.api(`/api/v1/links/by-post/${site}/${postId}`);
      return res.status === 200
        ? ((await res.json()) as { code: string; url: string; status: string })
        : undefined;
    },
    { what: `the link of post ${postId}` },
  );
}

describe('POST /api/v1/hooks/wordpress', () => {
  test('post.published starts the publish workflow, which mints and activates the post link', async () => {
    const event = publishEvent();
    const res = await h.webhook(event);
    assert.equal(res.status, 202);
    const accepted = (await res.json()) as { workflowId: string };
    assert.equal(accepted.workflowId, `publish:news:${event.postId}`);

    const link = await linkOfPost('news', event.postId);
    assert.equal(link.url, event.permalink);
    assert.equal(link.status, 'active');
    const result = (await h.temporal.client.workflow.getHandle(accepted.workflowId).result()) as {
      code: string;
      applied: string[];
    };
    assert.equal(result.code, link.code);
    assert.deepEqual(result.applied, [`post.published: active as ${link.code}`]);
    await recordHistory('publishPostWorkflow-published', accepted.workflowId);

    // The short link redirects byte-exactly to WordPress's percent-encoded permalink.
    const redirect = await h.app.request(`/${link.code}`);
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('Location'), event.permalink);

    // Operators find it in Temporal by code, site and post.
    const description = await h.temporal.client.workflow.getHandle(accepted.workflowId).describe();
    const attrs = description.typedSearchAttributes;
    assert.equal(attrs.getAll().find((p) => p.key.name === 'LifelineCode')?.value, link.code);
    assert.equal(attrs.getAll().find((p) => p.key.name === 'LifelineSite')?.value, 'news');
    assert.equal(attrs.getAll().find((p) => p.key.name === 'LifelinePostId')?.value, String(event.postId));
  });

  test('a duplicate delivery starts nothing new and a second delivery for the post mints nothing new', async () => {
    const event = publishEvent();
    assert.equal((await h.webhook(event)).status, 202);
    const link = await linkOfPost('news', event.postId);
    const runs = async () => {
      const list = [];
      for await (const wf of h.temporal.client.workflow.list({
        query: `WorkflowId = "publish:news:${event.postId}"`,
      })) {
        list.push(wf);
      }
      return list.length;
    };
    const before = await runs();
    const dup = await h.webhook(event);
    assert.equal(dup.status, 202);
    assert.deepEqual(await dup.json(), { workflowId: `publish:news:${event.postId}`, code: link.code });
    assert.equal(await runs(), before);

    // A new delivery id for the same post (say, a re-publish) reuses the post's one code.
    assert.equal((await h.webhook({ ...event, id: `${event.id}-again` })).status, 202);
    const again = await linkOfPost('news', event.postId);
    assert.equal(again.code, link.code);
    const count = await h.db
      .sql`SELECT count(*)::int AS n FROM links WHERE site = 'news' AND post_id = ${event.postId}`;
    assert.equal(count[0]!.n, 1);
  });

  test('bad signatures, stale timestamps and bad payloads are refused with problem+json', async () => {
    const event = publishEvent();
    const cases: [Response, number][] = [
      [await h.webhook(event, { secret: 'whsec_wrong_wrong_wrong' }), 401],
      [await h.webhook(event, { timestamp: Date.now() / 1000 - 600 }), 401],
      [
        await h.app.request('/api/v1/hooks/wordpress', {
          method: 'POST',
          body: JSON.stringify(event),
          headers: { 'Content-Type': 'application/json' },
        }),
        401,
      ],
      [await h.webhook(null, { rawBody: '{"id": 1,' }), 400],
      [await h.webhook({ ...event, postId: 'abc' }), 400],
      [await h.webhook({ ...event, permalink: 'javascript:alert(1)' }), 400],
      [await h.webhook({ ...event, event: 'post.deleted' }), 400],
      [await h.webhook({ ...event, permalink: undefined }), 400],
    ];
    for (const [res, status] of cases) {
      assert.equal(res.status, status, await res.clone().text());
      assert.equal(res.headers.get('Content-Type'), 'application/problem+json');
    }
    // Nothing was accepted, so nothing was recorded.
    const rows = await h.db.sql`SELECT 1 FROM webhook_deliveries WHERE delivery_id = ${event.id}`;
    assert.equal(rows.length, 0);
  });

  test('when Temporal cannot take the work: 503 with Retry-After, nothing recorded, and a retry succeeds', async () => {
    const deadPort = await getFreePort();
    const downGateway = createWorkflowGateway({
      temporal: createTemporalClient({
        connection: { address: `127.0.0.1:${deadPort}` },
        namespace: 'default',
      }),
      taskQueue: h.taskQueue,
      logger: createLogger({ level: 'silent' }),
    });
    const downApp = createApp({ ...h.deps, workflows: downGateway });
    const event = publishEvent();
    const { signWebhook } = await import('../../../lib/auth/webhook_signature.ts');
    const raw = JSON.stringify(event);
    const res = await downApp.request('/api/v1/hooks/wordpress', {
      method: 'POST',
      body: raw,
      headers: {
        'Content-Type': 'application/json',
        'X-Lifeline-Signature': await signWebhook(h.webhookSecret, raw, Date.now() / 1000),
      },
    });
    assert.equal(res.status, 503);
    assert.ok(Number(res.headers.get('Retry-After')) > 0);
    const rows = await h.db.sql`SELECT 1 FROM webhook_deliveries WHERE delivery_id = ${event.id}`;
    assert.equal(rows.length, 0);
    await downGateway.close();

    // The sender retries the same delivery against a healthy tier: it is accepted and the post gets its link.
    assert.equal((await h.webhook(event)).status, 202);
    assert.equal((await linkOfPost('news', event.postId)).status, 'active');
  });

  test('post.updated and post.unpublished are accepted just as durably (503 + Retry-After when Temporal is down)', async () => {
    const published = publishEvent();
    assert.equal((await h.webhook(published)).status, 202);
    const link = await linkOfPost('news', published.postId);
    const later = (ms: number) => new Date(Date.parse(published.occurredAt) + ms).toISOString();
    const updated = {
      ...published,
      id: `${published.id}-u`,
      event: 'post.updated',
      permalink: `${published.permalink}?v=2`,
      occurredAt: later(1000),
    };
    const unpublished = {
      id: `${published.id}-x`,
      event: 'post.unpublished',
      site: 'news',
      postId: published.postId,
      occurredAt: later(2000),
    };

    const deadPort = await getFreePort();
    const downGateway = createWorkflowGateway({
      temporal: createTemporalClient({
        connection: { address: `127.0.0.1:${deadPort}` },
        namespace: 'default',
      }),
      taskQueue: h.taskQueue,
      logger: createLogger({ level: 'silent' }),
    });
    const downApp = createApp({ ...h.deps, workflows: downGateway });
    const { signWebhook } = await import('../../../lib/auth/webhook_signature.ts');
    for (const event of [updated, unpublished]) {
      const raw = JSON.stringify(event);
      const res = await downApp.request('/api/v1/hooks/wordpress', {
        method: 'POST',
        body: raw,
        headers: {
          'Content-Type': 'application/json',
          'X-Lifeline-Signature': await signWebhook(h.webhookSecret, raw, Date.now() / 1000),
        },
      });
      assert.equal(res.status, 503, event.event);
      assert.ok(Number(res.headers.get('Retry-After')) > 0);
      assert.equal(
        (await h.db.sql`SELECT 1 FROM webhook_deliveries WHERE delivery_id = ${event.id}`).length,
        0,
      );
    }
    await downGateway.close();

    // The sender's retries against a healthy tier are applied in order: retargeted, then gone; same code.
    const accepted = await h.webhook(updated);
    assert.equal(accepted.status, 202);
    assert.deepEqual(await accepted.json(), {
      workflowId: `publish:news:${published.postId}`,
      code: link.code,
    });
    await eventually(async () =>
      (await linkOfPost('news', published.postId)).url === updated.permalink ? true : undefined,
    );
    assert.equal((await h.webhook(unpublished)).status, 202);
    await eventually(async () =>
      (await linkOfPost('news', published.postId)).status === 'gone' ? true : undefined,
    );
    // Cached answers follow once the link's sync workflow has refreshed them (README: staleness bound).
    await eventually(async () => ((await h.app.request(`/${link.code}`)).status === 410 ? true : undefined));
  });
});
