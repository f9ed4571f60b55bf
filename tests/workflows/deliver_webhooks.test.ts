// Outgoing webhooks end to end (ADR 0082) on real parts: Postgres, the Temporal dev server, a real worker, and a
// loopback receiver whose every request is verified with the `standardwebhooks` package (an implementation
// independent of ours). Events written by the API land in the outbox in the change's transaction and are
// delivered by the one drainer workflow: signatures, rotation, retries, dead-letter, fail-fast answers, 429
// Retry-After, the outgoing-request rule, "send again", a batch of events, and a worker that was down.
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createHarness, createLinkCode, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { expireDueLinks } from '../../lib/links/expire_link.ts';
import { applyScanResult } from '../../lib/safety/apply_scan_result.ts';
import { reportLink } from '../../lib/safety/report_link.ts';
import { toScanResult } from '../../lib/safety/scan_result.ts';
import { createOutgoingFetch, STRICT_OUTGOING_RULE } from '../../lib/shared/outgoing_request.ts';
import { runOnce } from '../../lib/shared/task_context.ts';
import { getLinkByCode } from '../../lib/stores/link_store.ts';
import { getWebhookQueueStats } from '../../lib/stores/webhook_store.ts';
import { deliverWebhooks } from '../../lib/webhooks/deliver_webhooks.ts';
import type { WebhookDelivery } from '../../lib/webhooks/manage_webhooks.ts';
import { getDrainerTaskQueue, WORKFLOW_TYPES } from '../../workflows/contract.ts';
import {
  type ReceivedHook,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../helpers/webhook_receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let worker: { stop(): Promise<void> } | undefined;

const SETTINGS = {
  WEBHOOK_RETRY_BASE_MS: '100',
  WEBHOOK_RETRY_MAX_MS: '400',
  WEBHOOK_MAX_ATTEMPTS: '4',
  WEBHOOK_POLL_INTERVAL_MS: '200',
  WEBHOOK_TIMEOUT_MS: '3000',
};

before(async () => {
  receiver = await startWebhookReceiver();
  h = await createHarness({ env: SETTINGS });
});
after(async () => {
  await worker?.stop();
  await h.close();
  await receiver.close();
});

async function addEndpoint(path: string, eventTypes: string[]): Promise<{ id: number; secret: string }> {
  const res = await h.api('/api/v1/webhooks', {
    method: 'POST',
    json: { url: `${receiver.base}${path}`, eventTypes, description: `receiver ${path}` },
  });
  assert.equal(res.status, 201, await res.clone().text());
  const body = (await res.json()) as { id: number; secret: string };
  assert.match(body.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  return body;
}

async function deliveries(id: number): Promise<WebhookDelivery[]> {
  const res = await h.api(`/api/v1/webhooks/${id}/deliveries`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { items: WebhookDelivery[] }).items;
}

/** Waits until `path` received `count` requests. */
function received(path: string, count: number, timeoutMs = 30_000): Promise<ReceivedHook[]> {
  return eventually(async () => (receiver.at(path).length >= count ? receiver.at(path) : undefined), {
    timeoutMs,
    what: () => `${count} requests at ${path} (got ${receiver.at(path).length})`,
  });
}

/** Waits until the endpoint's deliveries are all in `state`. */
function settled(id: number, state: WebhookDelivery['state'], count = 1): Promise<WebhookDelivery[]> {
  return eventually(
    async () => {
      const items = await deliveries(id);
      return items.length >= count && items.every((d) => d.state === state) ? items : undefined;
    },
    { timeoutMs: 30_000, what: `${count} deliveries of endpoint ${id} ${state}` },
  );
}

const verify = (secret: string, hook: ReceivedHook) =>
  new Webhook(secret).verify(hook.body, hook.headers) as { type: string; data: Record<string, unknown> };

describe('outgoing webhooks', () => {
  test('the outgoing-request rule: a private address is refused at creation, and at connect time', async () => {
    const refused = await h.api('/api/v1/webhooks', {
      method: 'POST',
      json: { url: 'https://10.20.30.40/hook', eventTypes: ['link.created'] },
    });
    assert.equal(refused.status, 422);
    const problem = (await refused.json()) as { errors: { path: string; message: string }[] };
    assert.equal(problem.errors[0]?.path, 'url');
    assert.match(problem.errors[0]!.message, /not a public one/);
    const none = await h.api('/api/v1/webhooks', {
      method: 'POST',
      json: { url: `${receiver.base}/x`, eventTypes: [] },
    });
    assert.equal(none.status, 422);

    // A name that resolves to a private address passes the URL check and is refused where the socket opens
    // (no worker runs yet: this drainer step is the only sender).
    const [row] = await h.db.sql<{ id: number }[]>`
      INSERT INTO webhook_endpoints (url, event_types, secret, created_by)
      VALUES ('https://hooks.example.test/in', ARRAY['link.created'], 'whsec_c2VjcmV0', 'test')
      RETURNING id::int`;
    const code = await createLinkCode(h, { url: 'https://example.com/webhooks/refused' });
    const lookup = (
      _host: string,
      _o: { all: true },
      cb: (e: NodeJS.ErrnoException | null, a: LookupAddress[]) => void,
    ) => cb(null, [{ address: '10.0.0.5', family: 4 }]);
    const report = await deliverWebhooks(
      {
        sql: h.db.sql,
        logger: h.logger,
        fetch: createOutgoingFetch(STRICT_OUTGOING_RULE, { lookup }),
        settings: { ...h.config.webhooks },
      },
      runOnce(),
    );
    assert.equal(report.failed, 1);
    const [failed] = await deliveries(row!.id);
    assert.equal(failed?.state, 'failed');
    assert.equal(failed?.payload.code, code);
    assert.match(failed?.log[0]?.error ?? '', /was not connected to: 10\.0\.0\.5/);
    assert.equal(failed?.log[0]?.statusCode, null);
    await h.db.sql`DELETE FROM webhook_endpoints WHERE id = ${row!.id}`;
  });

  test('a signed delivery the standardwebhooks package verifies; later link events; send again', async () => {
    worker = await h.startWorker();
    const endpoint = await addEndpoint('/ok', ['link.created', 'link.updated', 'link.deleted']);
    const code = await createLinkCode(h, { url: 'https://example.com/webhooks/first', title: 'First' });
    const [hook] = await received('/ok', 1);
    const payload = verify(endpoint.secret, hook!);
    assert.equal(payload.type, 'link.created');
    assert.equal(payload.data.code, code);
    assert.equal(payload.data.url, 'https://example.com/webhooks/first');
    assert.match(hook!.headers['webhook-id']!, /^msg_[0-9a-f]{32}$/);
    assert.match(hook!.headers['webhook-timestamp']!, /^\d{10}$/);
    assert.equal(hook!.headers['webhook-signature']!.split(' ').length, 1);
    // A tampered body does not verify: the signature covers the bytes sent.
    assert.throws(() => new Webhook(endpoint.secret).verify(hook!.body.replace(code, 'zzzz'), hook!.headers));

    const [delivered] = await settled(endpoint.id, 'delivered');
    assert.equal(delivered?.id, hook!.headers['webhook-id']);
    assert.equal(delivered?.log.length, 1);
    assert.equal(delivered?.log[0]?.statusCode, 200);
    assert.equal(delivered?.log[0]?.responseBody, 'answered 200');

    assert.equal(
      (await h.api(`/api/v1/links/${code}`, { method: 'PATCH', json: { title: 'Second' } })).status,
      200,
    );
    assert.equal((await h.api(`/api/v1/links/${code}`, { method: 'DELETE' })).status, 204);
    const hooks = await received('/ok', 3);
    const types = hooks.map((r) => verify(endpoint.secret, r).type).sort();
    assert.deepEqual(types, ['link.created', 'link.deleted', 'link.updated']);

    // Send again: the same message, under the same id, signed anew.
    const again = await h.api(`/api/v1/webhooks/${endpoint.id}/deliveries/${delivered!.id}/redeliver`, {
      method: 'POST',
    });
    assert.equal(again.status, 202);
    const all = await received('/ok', 4);
    const resent = all[3]!;
    assert.equal(resent.headers['webhook-id'], delivered!.id);
    assert.equal(resent.body, hook!.body);
    assert.equal(verify(endpoint.secret, resent).type, 'link.created');
    const unknown = await h.api(`/api/v1/webhooks/${endpoint.id}/deliveries/msg_nope/redeliver`, {
      method: 'POST',
    });
    assert.equal(unknown.status, 404);
    assert.equal((await h.api(`/api/v1/webhooks/${endpoint.id}`, { method: 'DELETE' })).status, 204);
  });

  test('rotation: both secrets sign during the grace, then only the new one', async () => {
    const endpoint = await addEndpoint('/rotating', ['link.created']);
    const rotated = await h.api(`/api/v1/webhooks/${endpoint.id}/rotate-secret`, {
      method: 'POST',
      json: { graceSeconds: 600 },
    });
    assert.equal(rotated.status, 200);
    const { secret: next, previousSecretUntil } = (await rotated.json()) as {
      secret: string;
      previousSecretUntil: string | null;
    };
    assert.notEqual(next, endpoint.secret);
    assert.ok(previousSecretUntil && Date.parse(previousSecretUntil) > Date.now());
    const listed = await (await h.api(`/api/v1/webhooks/${endpoint.id}`)).text();
    assert.ok(!listed.includes(next) && !listed.includes(endpoint.secret), 'secrets are never listed');

    await createLinkCode(h, { url: 'https://example.com/webhooks/rotation-1' });
    const [during] = await received('/rotating', 1);
    assert.equal(during!.headers['webhook-signature']!.split(' ').length, 2);
    assert.equal(verify(endpoint.secret, during!).type, 'link.created');
    assert.equal(verify(next, during!).type, 'link.created');

    // The grace ends (as if its time had passed): only the new secret signs.
    await h.db.sql`UPDATE webhook_endpoints SET previous_secret_until = now() - interval '1 second'
                   WHERE id = ${endpoint.id}`;
    await createLinkCode(h, { url: 'https://example.com/webhooks/rotation-2' });
    const [, afterGrace] = await received('/rotating', 2);
    assert.equal(afterGrace!.headers['webhook-signature']!.split(' ').length, 1);
    assert.equal(verify(next, afterGrace!).type, 'link.created');
    assert.throws(() => verify(endpoint.secret, afterGrace!));
    await h.api(`/api/v1/webhooks/${endpoint.id}`, { method: 'DELETE' });
  });

  test('retries after 5xx until a success; dead after persistent 500; 400 and 410 fail at once', async () => {
    receiver.script('/flaky', [500, 503, 200]);
    receiver.script('/down', [500]);
    receiver.script('/bad', [400]);
    receiver.script('/gone', [410]);
    const flaky = await addEndpoint('/flaky', ['link.created']);
    const down = await addEndpoint('/down', ['link.created']);
    const bad = await addEndpoint('/bad', ['link.created']);
    const gone = await addEndpoint('/gone', ['link.created']);
    await createLinkCode(h, { url: 'https://example.com/webhooks/retries' });

    const [ok] = await settled(flaky.id, 'delivered');
    assert.deepEqual(ok!.log.map((a) => [a.outcome, a.statusCode]).reverse(), [
      ['retry', 500],
      ['retry', 503],
      ['delivered', 200],
    ]);
    const flakyHooks = receiver.at('/flaky');
    assert.equal(new Set(flakyHooks.map((r) => r.headers['webhook-id'])).size, 1, 'one id on every attempt');
    for (const r of flakyHooks) assert.equal(verify(flaky.secret, r).type, 'link.created');

    const [dead] = await settled(down.id, 'dead');
    assert.equal(dead!.log.length, 4, 'WEBHOOK_MAX_ATTEMPTS attempts');
    assert.deepEqual(dead!.log.map((a) => a.outcome).reverse(), ['retry', 'retry', 'retry', 'dead']);
    assert.equal((await getWebhookQueueStats(h.db.sql)).deadLetteringEndpoints, 1);

    const [failed] = await settled(bad.id, 'failed');
    assert.equal(failed!.log.length, 1);
    assert.equal(failed!.log[0]!.statusCode, 400);
    const [goneFailed] = await settled(gone.id, 'failed');
    assert.equal(goneFailed!.log.length, 1);
    const goneEndpoint = (await (await h.api(`/api/v1/webhooks/${gone.id}`)).json()) as {
      enabled: boolean;
      disabledReason: string | null;
    };
    assert.equal(goneEndpoint.enabled, false, '410 switches the endpoint off');
    assert.match(goneEndpoint.disabledReason ?? '', /410/);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(receiver.at('/bad').length, 1, 'a 400 is not retried');
    assert.equal(receiver.at('/gone').length, 1, 'a 410 is not retried');
    for (const e of [flaky, down, bad, gone])
      assert.equal((await h.api(`/api/v1/webhooks/${e.id}`, { method: 'DELETE' })).status, 204);
  });

  test('429 holds the endpoint until its Retry-After, then the message goes', async () => {
    receiver.script('/busy', [429, 200], { retryAfter: '2' });
    const busy = await addEndpoint('/busy', ['link.created']);
    await createLinkCode(h, { url: 'https://example.com/webhooks/busy' });
    const [first, second] = await received('/busy', 2);
    assert.equal(first!.status, 429);
    assert.ok(second!.at - first!.at >= 1_900, `waited ${second!.at - first!.at} ms of Retry-After: 2`);
    const [ok] = await settled(busy.id, 'delivered');
    assert.deepEqual(ok!.log.map((a) => a.statusCode).reverse(), [429, 200]);
    await h.api(`/api/v1/webhooks/${busy.id}`, { method: 'DELETE' });
  });

  test('a batch of 150 links: 150 events through one drainer, every one delivered once', async () => {
    const bulk = await addEndpoint('/bulk', ['link.created']);
    const items = Array.from({ length: 150 }, (_, i) => ({ url: `https://example.com/webhooks/bulk/${i}` }));
    const res = await h.api('/api/v1/links/batch', { method: 'POST', json: { links: items } });
    assert.equal(res.status, 200);
    const hooks = await received('/bulk', 150, 60_000);
    const ids = new Set(hooks.map((r) => r.headers['webhook-id']));
    assert.equal(ids.size, 150);
    const urls = new Set(hooks.map((r) => verify(bulk.secret, r).data.url));
    assert.equal(urls.size, 150);
    await settled(bulk.id, 'delivered', 50);
    // One drainer, not a workflow per event.
    const running = h.temporal.client.workflow.list({
      query: `TaskQueue = "${getDrainerTaskQueue(h.taskQueue)}" AND LifelineKind = "webhooks"`,
    });
    const drainers: string[] = [];
    for await (const w of running) drainers.push(w.workflowId);
    assert.deepEqual([...new Set(drainers)], [`webhooks:${h.taskQueue}`]);
    await h.api(`/api/v1/webhooks/${bulk.id}`, { method: 'DELETE' });
  });

  test('an event written while the worker is down is delivered when it comes back', async () => {
    const later = await addEndpoint('/later', ['link.created']);
    // The worker stops while the drainer sleeps between steps. A step lost with the worker (stopped mid-step, or
    // handed to a poll the worker dropped as it shut down) is retried after the heartbeat timeout (10 s; the
    // worker-lost test file), which this test does not need to wait for.
    const drainer = h.temporal.client.workflow.getHandle(`webhooks:${h.taskQueue}`);
    await eventually(
      async () => ((await drainer.describe()).raw.pendingActivities?.length ? undefined : true),
      { timeoutMs: 60_000, what: 'the drainer between steps' },
    );
    await worker!.stop();
    worker = undefined;
    const code = await createLinkCode(h, { url: 'https://example.com/webhooks/while-down' });
    const [pending] = await h.db.sql<{ state: string }[]>`
      SELECT state FROM webhook_messages WHERE endpoint_id = ${later.id}`;
    assert.equal(pending?.state, 'pending', 'the outbox row was written with the link');
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(receiver.at('/later').length, 0, 'nothing is sent while no worker runs');
    worker = await h.startWorker();
    const [hook] = await received('/later', 1);
    assert.equal(verify(later.secret, hook!).data.code, code);
    await settled(later.id, 'delivered');
    await h.api(`/api/v1/webhooks/${later.id}`, { method: 'DELETE' });
  });

  test('link.expired, link.blocked and report.opened, each written where its fact changes', async () => {
    const facts = await addEndpoint('/facts', ['link.expired', 'link.blocked', 'report.opened']);
    const code = await createLinkCode(h, {
      url: 'https://example.com/webhooks/facts',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await h.db.sql`UPDATE links SET expires_at = now() - interval '1 second' WHERE code = ${code}`;
    // What the expiry sweeper does (one sweep's transaction), called directly rather than waited for.
    const sweep = await expireDueLinks({
      sql: h.db.sql,
      logger: h.logger,
      queue: { kickSyncQueue: async () => undefined },
    });
    assert.equal(sweep.expired, 1);
    const other = await createLinkCode(h, { url: 'https://example.com/webhooks/facts-2' });
    const link = (await getLinkByCode(h.db.sql, other))!;
    const blocked = await applyScanResult(
      h.db.sql,
      link,
      toScanResult(link.targetUrl, [{ verdict: 'blocked', rule: 'blocklist', reason: 'listed' }], true),
      { actor: 'system:test', reason: 'test', now: new Date() },
    );
    assert.equal(blocked !== 'conflict' && blocked?.after.safety, 'blocked');
    await reportLink(h.deps, { code: other, clientIp: '203.0.113.7', reason: 'spam' });
    const hooks = await received('/facts', 3);
    const byType = new Map(hooks.map((r) => [verify(facts.secret, r).type, verify(facts.secret, r).data]));
    assert.deepEqual([...byType.keys()].sort(), ['link.blocked', 'link.expired', 'report.opened']);
    assert.equal(byType.get('link.expired')?.code, code);
    assert.equal(byType.get('link.blocked')?.safety, 'blocked');
    assert.deepEqual(byType.get('report.opened'), { code: other, reason: 'spam' });
    await h.api(`/api/v1/webhooks/${facts.id}`, { method: 'DELETE' });
  });

  test("clicks.daily: yesterday's clicks summed once per day and endpoint, delivered", async () => {
    const daily = await addEndpoint('/daily', ['clicks.daily']);
    const code = await createLinkCode(h, { url: 'https://example.com/webhooks/clicked' });
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await h.db.sql`
      INSERT INTO click_counts (code, hour, kind, clicks) VALUES
        (${code}, ${`${yesterday}T09:00:00Z`}::timestamptz, 'human', 40),
        (${code}, ${`${yesterday}T23:00:00Z`}::timestamptz, 'human', 2),
        (${code}, ${`${yesterday}T10:00:00Z`}::timestamptz, 'bot', 5)`;
    const run = (n: number) =>
      h.temporal.client.workflow.execute(WORKFLOW_TYPES.dailyClicksWebhook, {
        taskQueue: h.taskQueue,
        workflowId: `webhook-clicks-daily:${h.taskQueue}-test-${n}`,
        args: [],
      }) as Promise<{ date: string; messages: number }>;
    assert.deepEqual(await run(1), { date: yesterday, messages: 1 });
    assert.deepEqual(await run(2), { date: yesterday, messages: 0 }, 'the day goes once');
    await recordHistory('dailyClicksWebhookWorkflow-run', `webhook-clicks-daily:${h.taskQueue}-test-1`);
    const [hook] = await received('/daily', 1);
    const body = verify(daily.secret, hook!);
    assert.equal(body.type, 'clicks.daily');
    assert.deepEqual(body.data, {
      date: yesterday,
      total: 47,
      byKind: { human: 42, bot: 5 },
      top: [{ code, clicks: 42 }],
    });
    await h.api(`/api/v1/webhooks/${daily.id}`, { method: 'DELETE' });
  });

  test('the drainer ends when no endpoint is enabled', async () => {
    const { items } = (await (await h.api('/api/v1/webhooks')).json()) as { items: { id: number }[] };
    for (const e of items) await h.api(`/api/v1/webhooks/${e.id}`, { method: 'DELETE' });
    const handle = h.temporal.client.workflow.getHandle(`webhooks:${h.taskQueue}`);
    const totals = (await handle.result()) as { delivered: number; dead: number };
    assert.ok(totals.delivered > 0);
    const { runId } = await handle.describe();
    await recordHistory('deliverWebhooksWorkflow-drained', `webhooks:${h.taskQueue}`, runId);
  });
});
