// Expiry (ADR 0091): one sweeper per deployment (`expiry-sweep:{taskQueue}`) expires due links in batches, each
// in one transaction with its audit entry, `link.expired` webhook event and sync-queue row; the sync drainer then
// carries them to the serving store. Real Postgres, Redis, Temporal dev server and workers (in-process, and the
// real worker entry in a child process that is SIGKILLed mid-sweep). The per-link timers of before
// (`expire:{code}`) are never started any more; the ones a deployment still runs find Postgres decided.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { Registry } from 'prom-client';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { uniqueId, workflowExists as workflowExistsIn } from '../../devkit/harness/temporal.ts';
import { startWorkerProcess } from '../../devkit/harness/worker_process.ts';
import { decodeServingRecord } from '../../lib/redirect/serving_store.ts';
import { registerExpiryGauges } from '../../lib/shared/metrics.ts';
import { getExpiryBacklog } from '../../lib/stores/link_lifecycle_store.ts';
import {
  type ExpireLinkResult,
  type ExpirySweepStep,
  type ExpirySweepTotals,
  expirySweepQuery,
  getExpirySweepWorkflowId,
} from '../../workflows/contract.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook_receiver.ts';

const PREFIX = `${uniqueId('lifeline-expiry')}:`;
const REDIS_URL = 'redis://127.0.0.1:6379';
let h: Harness;
let redis: ReturnType<typeof createClient>;
let receiver: WebhookReceiver;
let worker: Awaited<ReturnType<Harness['startWorker']>> | undefined;
let child: ReturnType<typeof startWorkerProcess> | undefined;

before(async () => {
  receiver = await startWebhookReceiver();
  h = await createHarness({ env: { REDIS_URL, REDIS_KEY_PREFIX: PREFIX } });
  redis = createClient({ url: REDIS_URL });
  await redis.connect();
  worker = await h.startWorker();
  const res = await h.api('/api/v1/webhooks', {
    method: 'POST',
    json: { url: `${receiver.base}/expired`, eventTypes: ['link.expired'], description: 'expiry test' },
  });
  assert.equal(res.status, 201, await res.clone().text());
});
after(async () => {
  child?.process.kill('SIGKILL');
  await redis.close();
  await h.close();
  await receiver.close();
});

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function createLink(json: Record<string, unknown>): Promise<string> {
  const res = await h.api('/api/v1/links', { method: 'POST', json });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { code: string }).code;
}

async function statusOf(code: string): Promise<string> {
  const [row] = await h.db.sql`SELECT status FROM links WHERE code = ${code}`;
  return row!.status as string;
}

async function servedStatus(code: string): Promise<string | undefined> {
  return decodeServingRecord(code, await redis.get(`${PREFIX}link:${code}`))?.status;
}

/** What an edit of expiresAt does (PATCH /api/v1/links/{code}): write Postgres, then tell the sync workflow. */
async function moveExpiry(code: string, expiresAt: string | null): Promise<void> {
  await h.db.sql`UPDATE links SET expires_at = ${expiresAt}, version = version + 1 WHERE code = ${code}`;
  await h.deps.workflows.syncLink(code, 'expiresAt edited');
}

const sweeper = () => h.temporal.client.workflow.getHandle(getExpirySweepWorkflowId(h.taskQueue));

async function sweeperState(): Promise<{ wakeAtMs: number | null; totals: ExpirySweepTotals }> {
  return sweeper().query(expirySweepQuery);
}

async function expiryAudits(codes: string[]): Promise<{ entries: number; links: number }> {
  const [row] = await h.db.sql<{ entries: number; links: number }[]>`
    SELECT count(*)::int AS entries, count(DISTINCT code)::int AS links FROM audit_log
    WHERE code = ANY(${codes}) AND actor = 'system:expire' AND action = 'link.status_changed'`;
  return row!;
}

async function expiredEvents(codes: string[]): Promise<{ messages: number; links: number }> {
  const [row] = await h.db.sql<{ messages: number; links: number }[]>`
    SELECT count(*)::int AS messages, count(DISTINCT payload->>'code')::int AS links FROM webhook_messages
    WHERE event_type = 'link.expired' AND payload->>'code' = ANY(${codes})`;
  return row!;
}

async function countExpired(codes: string[]): Promise<number> {
  const [row] = await h.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM links WHERE code = ANY(${codes}) AND status = 'expired'`;
  return row!.n;
}

const workflowExists = (workflowId: string) => workflowExistsIn(h.temporal.client, workflowId);

/** Every sweep's result in the sweeper's history (every run of its chain), oldest first. */
async function sweepsInHistory(): Promise<ExpirySweepStep[]> {
  const steps: ExpirySweepStep[] = [];
  const workflowId = getExpirySweepWorkflowId(h.taskQueue);
  const runs: string[] = [];
  for await (const execution of h.temporal.client.workflow.list({ query: `WorkflowId = "${workflowId}"` }))
    runs.push(execution.runId);
  for (const runId of runs.reverse()) {
    const history = await h.temporal.client.workflow.getHandle(workflowId, runId).fetchHistory();
    for (const event of history.events ?? []) {
      const data = event.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
      if (data) steps.push(JSON.parse(Buffer.from(data).toString('utf8')) as ExpirySweepStep);
    }
  }
  return steps;
}

/** Inserts `n` active links due at `expiresAt` (SQL: as a restore or an import leaves them), returns the codes. */
async function insertDue(prefix: string, n: number, expiresAt: string): Promise<string[]> {
  const codes = Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);
  await h.db.sql`
    INSERT INTO links (code, target_url, status, origin, owner, expires_at)
    SELECT c, 'https://example.com/due/' || c, 'active', 'import', 'test', ${expiresAt}::timestamptz
    FROM unnest(${codes}::text[]) AS t(c)`;
  return codes;
}

describe('the expiry sweeper', () => {
  test('a link created with expiresAt expires: status expired, audited, in the serving store, webhook event', async () => {
    const expiresAt = inMs(2_500);
    const code = await createLink({
      url: 'https://example.com/sale',
      expiresAt,
      expiredUrl: 'https://example.com/over',
    });
    // The link's sync pass told the sweeper (starting it): it wakes by the link's date. No timer per link.
    await eventually(
      async () => {
        const { wakeAtMs } = await sweeperState();
        // Its own clock plus Postgres's distance to the date: within a sweep's round trip of it.
        return wakeAtMs !== null && wakeAtMs <= Date.parse(expiresAt) + 1_000 ? true : undefined;
      },
      { what: 'the sweeper to know the date' },
    );
    const attrs = (await sweeper().describe()).typedSearchAttributes.getAll();
    assert.deepEqual(
      attrs.filter((p) => p.key.name.startsWith('Lifeline')).map((p) => [p.key.name, p.value]),
      [['LifelineKind', 'expiry-sweep']],
    );
    assert.equal(await workflowExists(`expire:${code}`), false, 'no per-link timer');
    assert.equal(await statusOf(code), 'active');

    await eventually(async () => ((await statusOf(code)) === 'expired' ? true : undefined), {
      timeoutMs: 20_000,
      what: 'the link to expire',
    });
    assert.ok(Date.now() >= Date.parse(expiresAt));
    const redirect = await h.app.request(`/${code}`);
    assert.deepEqual([redirect.status, redirect.headers.get('Location')], [302, 'https://example.com/over']);
    const [audit] = await h.db.sql`
      SELECT actor, before, after, reason FROM audit_log WHERE code = ${code} AND action = 'link.status_changed'`;
    assert.deepEqual(
      [audit!.actor, audit!.before, audit!.after, audit!.reason],
      [
        'system:expire',
        { status: 'active', expiresAt: new Date(expiresAt).toISOString() },
        { status: 'expired' },
        'expiry reached',
      ],
    );
    assert.deepEqual(await expiredEvents([code]), { messages: 1, links: 1 });
    const [event] = await h.db.sql`
      SELECT payload FROM webhook_messages WHERE event_type = 'link.expired' AND payload->>'code' = ${code}`;
    assert.deepEqual(event!.payload, { code, expiresAt: new Date(expiresAt).toISOString() });
    // The sync drainer took it to the serving store (queued in the expiry's transaction).
    await eventually(async () => ((await servedStatus(code)) === 'expired' ? true : undefined), {
      what: 'the serving store to hold it expired',
    });
    await eventually(
      async () => {
        const [row] = await h.db.sql`SELECT count(*)::int AS n FROM link_sync_queue WHERE code = ${code}`;
        return row!.n === 0 ? true : undefined;
      },
      { what: 'the sync queue to drain' },
    );
  });

  test('moving the expiry earlier makes it expire earlier; moving it later keeps the link alive past the old date', async () => {
    const early = await createLink({ url: 'https://example.com/early', expiresAt: inMs(3_600_000) });
    await sleep(500);
    const moved = inMs(1_500);
    await moveExpiry(early, moved);
    await eventually(async () => ((await statusOf(early)) === 'expired' ? true : undefined), {
      timeoutMs: 15_000,
      what: 'the moved expiry',
    });
    const [row] = await h.db.sql`SELECT updated_at FROM links WHERE code = ${early}`;
    const lateMs = (row!.updated_at as Date).getTime() - Date.parse(moved);
    assert.ok(lateMs >= 0 && lateMs < 10_000, `expired ${lateMs} ms after the moved date`);

    const late = await createLink({ url: 'https://example.com/late', expiresAt: inMs(2_000) });
    await moveExpiry(late, inMs(3_600_000));
    await sleep(3_500); // past the original date
    assert.equal(await statusOf(late), 'active');
    assert.equal(await servedStatus(late), 'active');
    await moveExpiry(late, inMs(500));
    await eventually(async () => ((await statusOf(late)) === 'expired' ? true : undefined), {
      timeoutMs: 15_000,
      what: 'the expiry moved back',
    });
    assert.deepEqual(await expiryAudits([early, late]), { entries: 2, links: 2 });
  });

  test('removing the expiry keeps the link alive', async () => {
    const code = await createLink({ url: 'https://example.com/forever', expiresAt: inMs(2_000) });
    await moveExpiry(code, null);
    await sleep(3_500);
    assert.equal(await statusOf(code), 'active');
    assert.deepEqual(await expiryAudits([code]), { entries: 0, links: 0 });
  });

  test('a date already past expires at once', async () => {
    await h.db.sql`
      INSERT INTO links (code, target_url, status, origin, owner, expires_at)
      VALUES ('pastdue', 'https://example.com/old', 'active', 'import', 'test', now() - interval '1 day')`;
    const started = Date.now();
    await h.deps.workflows.syncLink('pastdue', 'imported');
    await eventually(async () => ((await statusOf('pastdue')) === 'expired' ? true : undefined), {
      what: 'expiry',
    });
    assert.ok(Date.now() - started < 10_000);
    assert.deepEqual(await expiryAudits(['pastdue']), { entries: 1, links: 1 });
  });

  test('a link deleted (gone) before its expiry is left alone', async () => {
    const code = await createLink({ url: 'https://example.com/deleted', expiresAt: inMs(1_500) });
    await h.db.sql`UPDATE links SET status = 'gone', deleted_at = now() WHERE code = ${code}`;
    await sleep(3_000);
    assert.equal(await statusOf(code), 'gone');
    assert.deepEqual(await expiryAudits([code]), { entries: 0, links: 0 });
    assert.deepEqual(await expiredEvents([code]), { messages: 0, links: 0 });
  });

  test('1,200 links due together expire in batches of EXPIRY_BATCH_SIZE, each once, one audit entry each', async () => {
    const before = (await sweepsInHistory()).length;
    const dueAt = inMs(8_000);
    // Through the batch API as a newsroom would make them: each batch of the sync drainer tells the sweeper once.
    const codes: string[] = [];
    for (let part = 0; part < 2; part++) {
      const links = Array.from({ length: 600 }, (_, i) => ({
        url: `https://example.com/burst/${part}/${i}`,
        expiresAt: dueAt,
      }));
      const res = await h.api('/api/v1/links/batch', { method: 'POST', json: { links } });
      assert.equal(res.status, 200, await res.clone().text());
      const { results } = (await res.json()) as { results: { status: number; link?: { code: string } }[] };
      assert.ok(results.every((r) => r.status === 201));
      codes.push(...results.map((r) => r.link!.code));
    }
    await eventually(async () => ((await countExpired(codes)) === codes.length ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'every link to expire',
    });
    // A sweep's links are expired in Postgres before its activity's result is in the history, and a run that
    // continued as new shows in the list only once visibility has it: read until the history accounts for all.
    let sweeps: ExpirySweepStep[] = [];
    await eventually(
      async () => {
        sweeps = (await sweepsInHistory()).slice(before).filter((s) => s.expired > 0);
        return sweeps.reduce((n, s) => n + s.expired, 0) >= codes.length ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'the sweeper history to account for every expired link' },
    ).catch(() => {});
    assert.ok(sweeps.length >= 3, `expired in ${sweeps.length} sweeps: ${sweeps.map((s) => s.expired)}`);
    assert.ok(sweeps.every((s) => s.batchSize === 500 && s.expired <= 500));
    assert.equal(
      sweeps.reduce((n, s) => n + s.expired, 0),
      codes.length,
    );
    assert.deepEqual(await expiryAudits(codes), { entries: codes.length, links: codes.length });
    assert.deepEqual(await expiredEvents(codes), { messages: codes.length, links: codes.length });
    await eventually(
      async () => {
        const values = await redis.mGet(codes.map((c) => `${PREFIX}link:${c}`));
        return values.every((raw, i) => decodeServingRecord(codes[i]!, raw)?.status === 'expired')
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the serving store to hold every link expired' },
    );
    assert.ok(
      !(await Promise.all(codes.slice(0, 20).map((c) => workflowExists(`expire:${c}`)))).some(Boolean),
    );
    await recordHistory('expirySweepWorkflow-batches', getExpirySweepWorkflowId(h.taskQueue));
  });

  test('an old per-link timer (from before the sweeper) finds Postgres decided and ends', async () => {
    const code = await createLink({ url: 'https://example.com/old-timer', expiresAt: inMs(1_000) });
    await eventually(async () => ((await statusOf(code)) === 'expired' ? true : undefined), {
      what: 'the sweeper to expire it',
    });
    const handle = await h.temporal.client.workflow.start('expireLinkWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `expire:${code}`,
      args: [{ code, expiresAtMs: Date.now() - 1_000 }],
    });
    assert.equal(((await handle.result()) as ExpireLinkResult).outcome, 'swept');
    assert.deepEqual(await expiryAudits([code]), { entries: 1, links: 1 });
    assert.deepEqual(await expiredEvents([code]), { messages: 1, links: 1 });
    // One that fires first (the sweeper not there yet) expires the link the sweeper's way.
    const [first] = await insertDue('oldtimer', 1, inMs(-1_000));
    const own = await h.temporal.client.workflow.start('expireLinkWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `expire:${first}`,
      args: [{ code: first, expiresAtMs: Date.now() - 1_000 }],
    });
    const outcome = ((await own.result()) as ExpireLinkResult).outcome;
    assert.ok(outcome === 'expired' || outcome === 'swept', outcome);
    assert.equal(await statusOf(first!), 'expired');
    assert.deepEqual(await expiryAudits([first!]), { entries: 1, links: 1 });
  });

  test('a worker SIGKILLed mid-sweep loses nothing and duplicates nothing', async () => {
    await worker!.stop();
    worker = undefined;
    const N = 3_000;
    // Due already, and no signal: the worker's start wakes the sweeper with the earliest date.
    const codes = await insertDue('crash', N, inMs(-60_000));
    const env = { REDIS_URL, REDIS_KEY_PREFIX: PREFIX, LOG_LEVEL: 'info', EXPIRY_BATCH_SIZE: '50' };
    child = startWorkerProcess({ h, env });
    await eventually(async () => (child!.ready ? true : undefined), {
      timeoutMs: 120_000,
      what: 'the worker process',
    });
    await eventually(
      async () => {
        const n = await countExpired(codes);
        return n > 0 ? n : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 10, what: 'the sweep to be under way' },
    );
    child.process.kill('SIGKILL');
    await new Promise((r) => child!.process.once('exit', r));
    const atKill = await countExpired(codes);
    assert.ok(atKill > 0 && atKill < N, `killed mid-sweep: ${atKill} of ${N} expired`);
    // What is left is visible: the worker's gauge (and the operations page) read the backlog.
    const registry = new Registry();
    registerExpiryGauges(registry, () => getExpiryBacklog(h.db.sql));
    const gauges = new Map(
      (await registry.getMetricsAsJSON()).map((m) => [m.name, m.values[0]?.value as number | undefined]),
    );
    assert.equal(gauges.get('lifeline_expiry_overdue'), N - atKill);
    assert.ok((gauges.get('lifeline_expiry_overdue_oldest_seconds') ?? 0) >= 59);

    child = startWorkerProcess({ h, env });
    await eventually(async () => (child!.ready ? true : undefined), {
      timeoutMs: 120_000,
      what: 'the second worker process',
    });
    await eventually(async () => ((await countExpired(codes)) === N ? true : undefined), {
      timeoutMs: 120_000,
      intervalMs: 200,
      what: 'the new worker to expire the rest',
    });
    assert.deepEqual(await expiryAudits(codes), { entries: N, links: N });
    assert.deepEqual(await expiredEvents(codes), { messages: N, links: N });
    await eventually(
      async () => {
        const [row] = await h.db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM link_sync_queue WHERE code = ANY(${codes})`;
        return row!.n === 0 ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200, what: 'the sync queue to drain' },
    );
    const values = await redis.mGet(codes.map((c) => `${PREFIX}link:${c}`));
    assert.ok(values.every((raw, i) => decodeServingRecord(codes[i]!, raw)?.status === 'expired'));
  });
});
