// Bulk changes sync in batches (ADR 0024): an API batch queues its codes with its rows; one drainer workflow
// (`sync-queue:{taskQueue}`) takes them to the serving store and the Bitly fake in batches, with the same
// collision rules as the per-link `sync:{code}` workflow, which still handles single edits and takes over a link
// that keeps failing. Real Postgres, Redis, Temporal dev server and worker; only Bitly is a fake.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { Registry } from 'prom-client';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import {
  syncQueueBatches,
  uniqueId,
  workflowExists as workflowExistsIn,
} from '../../devkit/harness/temporal.ts';
import { getSyncQueueOverview } from '../../lib/propagation/link_sync_queue.ts';
import { decodeServingRecord } from '../../lib/redirect/serving_store.ts';
import { registerSyncQueueGauges } from '../../lib/shared/metrics.ts';
import { getSyncQueueWorkflowId, getSyncWorkflowId } from '../../workflows/contract.ts';
import { createUiClient } from '../helpers/ui_client.ts';

const PREFIX = `${uniqueId('lifeline-syncq')}:`;
let fake: BitlyFake;
let h: Harness;
let redis: ReturnType<typeof createClient>;

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({
    env: { ...fake.env(), REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: PREFIX },
  });
  redis = createClient({ url: 'redis://127.0.0.1:6379' });
  await redis.connect();
});
after(async () => {
  await redis.close();
  await h.close();
  await fake.stop();
});

type BatchResult = { index: number; status: number; link?: { code: string; url: string } };
async function createBatch(links: unknown[]): Promise<{ code: string; url: string }[]> {
  const res = await h.api('/api/v1/links/batch', { method: 'POST', json: { links } });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('Lifeline-Sync'), 'queued');
  const { results } = (await res.json()) as { results: BatchResult[] };
  assert.ok(
    results.every((r) => r.status === 201),
    JSON.stringify(results.filter((r) => r.status !== 201)),
  );
  return results.map((r) => r.link!);
}

async function queueDepth(): Promise<number> {
  const [row] = await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM link_sync_queue`;
  return row!.n;
}

const workflowExists = (workflowId: string) => workflowExistsIn(h.temporal.client, workflowId);

/** The codes of every syncLinkBatch the drainer scheduled, from its history (every run of the chain). */
const batchesInHistory = () => syncQueueBatches(h.temporal.client, getSyncQueueWorkflowId(h.taskQueue));

describe('the sync queue of bulk changes', () => {
  test('an API batch queues its codes with its rows; the ops page and the metric show the depth', async () => {
    // No worker yet: the rows wait, and the drainer has been started (signalWithStart) to take them.
    const links = await createBatch([
      { url: 'https://example.com/queued/1' },
      { url: 'https://example.com/queued/2' },
      { url: 'https://example.com/queued/3' },
    ]);
    const queued = await h.db.sql<{ code: string; reason: string }[]>`
      SELECT code, reason FROM link_sync_queue ORDER BY code`;
    assert.deepEqual(
      queued.map((r) => r.code),
      links.map((l) => l.code).sort(),
    );
    assert.match(queued[0]!.reason, /^link\.created by apikey:/);
    await eventually(async () =>
      (await h.temporal.client.workflow.getHandle(getSyncQueueWorkflowId(h.taskQueue)).describe()).type ===
      'syncQueueWorkflow'
        ? true
        : undefined,
    );
    // No per-link workflow for a bulk change.
    assert.equal(await workflowExists(getSyncWorkflowId(links[0]!.code)), false);

    const admin = createUiClient(h.app as never);
    assert.equal((await admin.login('admin@example.test', 'correct horse battery')).status, 303);
    const page = await (await admin.get('/ui/ops')).text();
    assert.match(page, /Sync queue: 3 links wait for the serving store and Bitly \(0 retrying\)/);

    const registry = new Registry();
    registerSyncQueueGauges(registry, () => getSyncQueueOverview(h.db.sql));
    const metrics = await registry.metrics();
    assert.match(metrics, /^lifeline_sync_queue_depth 3$/m);
    assert.match(metrics, /^lifeline_sync_queue_retrying 0$/m);
    assert.match(metrics, /^lifeline_sync_queue_oldest_age_seconds \d/m);

    // A worker drains them.
    await h.startWorker({
      vendors: { bitly: { timeoutMs: 2_000 }, retryBaseMs: 50, retryMaxMs: 500 },
      syncQueue: { maxAttempts: 3, retryBaseMs: 50, retryMaxMs: 200 },
    });
    await eventually(async () => ((await queueDepth()) === 0 ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the queue to drain',
    });
    for (const link of links) assert.equal(fake.linkByKeyword(link.code)?.longUrl, link.url);
    assert.match(await (await admin.get('/ui/ops')).text(), /Sync queue: empty/);
  });

  test('1,000 links in one API batch reach the serving store and Bitly under the same codes, in batches', async () => {
    const items = Array.from({ length: 1000 }, (_, i) => ({ url: `https://example.com/bulk/${i}` }));
    const started = performance.now();
    const links = await createBatch(items);
    const answeredMs = performance.now() - started;
    const codes = links.map((l) => l.code);
    const urlOf = new Map(links.map((l) => [l.code, l.url]));

    await eventually(
      async () => {
        const values = await redis.mGet(codes.map((c) => `${PREFIX}link:${c}`));
        return values.every((raw, i) => decodeServingRecord(codes[i]!, raw)?.url === urlOf.get(codes[i]!))
          ? true
          : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 100, what: 'the serving store to hold every link' },
    );
    const servedMs = performance.now() - started;
    await eventually(
      async () => (codes.every((c) => fake.linkByKeyword(c)?.longUrl === urlOf.get(c)) ? true : undefined),
      { timeoutMs: 240_000, intervalMs: 100, what: 'Bitly to hold every code' },
    );
    const bitlyMs = performance.now() - started;
    await eventually(async () => ((await queueDepth()) === 0 ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the queue to drain',
    });
    process.stderr.write(
      `[sync-queue] 1,000 links: answered ${answeredMs.toFixed(0)} ms, serving store ${servedMs.toFixed(0)} ms, ` +
        `Bitly ${bitlyMs.toFixed(0)} ms\n`,
    );

    // Identical back-halves: one live bitlink per link, holding exactly our code; every vendor row synced.
    const live = fake
      .listLinks()
      .filter((l) => !l.archived && l.longUrl.startsWith('https://example.com/bulk/'));
    assert.equal(live.length, 1000);
    for (const l of live) assert.deepEqual(l.keywords, [codes[Number(l.longUrl.split('/').pop())]!]);
    const [synced] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM vendor_links
      WHERE code = ANY(${codes}) AND vendor = 'bitly' AND state = 'synced'`;
    assert.equal(synced!.n, 1000);

    // The drainer's history names the codes of each batch; no per-link workflow was started.
    const batches = await batchesInHistory();
    const inHistory = new Set(batches.flat());
    for (const code of codes) assert.ok(inHistory.has(code), `${code} is named in the drainer's history`);
    assert.ok(
      batches.every((b) => b.length <= h.config.syncQueue.batchSize),
      'no batch is larger than SYNC_BATCH_SIZE',
    );
    for (const code of codes.slice(0, 5)) assert.equal(await workflowExists(getSyncWorkflowId(code)), false);
    // An empty queue ends the drainer (a kick starts it again).
    const handle = h.temporal.client.workflow.getHandle(getSyncQueueWorkflowId(h.taskQueue));
    const totals = (await handle.result()) as { synced: number; batches: number };
    assert.ok(totals.synced >= 1, JSON.stringify(totals));
    await recordHistory('syncQueueWorkflow-batches', getSyncQueueWorkflowId(h.taskQueue));
  });

  test('a Bitly collision inside a batch is handled as the per-link workflow handles it; the rest of the batch syncs', async () => {
    fake.seed({ keyword: 'sq-taken-batch', longUrl: 'https://theirs.example/a', group: 'Bsomeone0else' });
    fake.seed({ keyword: 'sq-taken-one', longUrl: 'https://theirs.example/b', group: 'Bsomeone0else' });
    const links = await createBatch([
      { url: 'https://example.com/collide/1', alias: 'sq-taken-batch' },
      { url: 'https://example.com/collide/2' },
      { url: 'https://example.com/collide/3' },
    ]);
    // The same situation for a single link, through its own workflow.
    const single = await h.api('/api/v1/links', {
      method: 'POST',
      json: { url: 'https://example.com/collide/4', alias: 'sq-taken-one' },
    });
    assert.equal(single.status, 201);
    await h.temporal.client.workflow.getHandle(getSyncWorkflowId('sq-taken-one')).result();
    await eventually(async () => ((await queueDepth()) === 0 ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the queue to drain',
    });

    const vendorRow = async (code: string) => {
      const [row] = await h.db.sql<{ state: string; error: string | null }[]>`
        SELECT state, last_error AS error FROM vendor_links WHERE code = ${code} AND vendor = 'bitly'`;
      return row;
    };
    const shape = (code: string, error: string | null | undefined) =>
      (error ?? '').replaceAll(code, 'CODE').replace(/ by \S+$/, ' by HOLDER');
    const batched = await vendorRow('sq-taken-batch');
    const alone = await vendorRow('sq-taken-one');
    assert.equal(batched?.state, 'collision');
    assert.equal(alone?.state, 'collision');
    assert.equal(shape('sq-taken-batch', batched?.error), shape('sq-taken-one', alone?.error));
    for (const code of ['sq-taken-batch', 'sq-taken-one']) {
      const audit = await h.db.sql`
        SELECT 1 FROM audit_log WHERE code = ${code} AND action = 'vendor.collision'`;
      assert.equal(audit.length, 1, `${code}: one collision audit entry`);
      assert.equal((await h.app.request(`/${code}`)).status, 301, 'our own resolver still serves it');
    }
    // Their links were not touched; the other links of the batch are on Bitly.
    assert.equal(fake.linkByKeyword('sq-taken-batch')?.longUrl, 'https://theirs.example/a');
    assert.equal(fake.linkByKeyword('sq-taken-one')?.longUrl, 'https://theirs.example/b');
    for (const link of links.slice(1)) {
      assert.equal(fake.linkByKeyword(link.code)?.longUrl, link.url);
      assert.equal((await vendorRow(link.code))?.state, 'synced');
    }
  });

  test('a link that keeps failing is retried with backoff, then handed to its own sync workflow (which says why)', async () => {
    const requestsBefore = fake.requestsTo('POST', '/bitlinks').length;
    // Bitly fails this link's creation three times (the worker's SYNC max attempts here: 3).
    fake.failNext({ method: 'POST', path: '/bitlinks', status: 503, message: 'UNAVAILABLE', times: 3 });
    const [link] = await createBatch([{ url: 'https://example.com/flaky' }]);
    const workflowId = getSyncWorkflowId(link!.code);
    await eventually(async () => ((await workflowExists(workflowId)) ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the hand-off to the per-link workflow',
    });
    await h.temporal.client.workflow.getHandle(workflowId).result();
    const history = await h.temporal.client.workflow.getHandle(workflowId).fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    const input = JSON.parse(Buffer.from(started!.input!.payloads![0]!.data!).toString('utf8')) as {
      reason: string;
    };
    assert.match(
      input.reason,
      /^sync queue gave up after 3 failed batches \(link\.created by apikey:.*\): .*503/,
    );
    assert.equal(fake.linkByKeyword(link!.code)?.longUrl, link!.url);
    assert.equal(
      fake.requestsTo('POST', '/bitlinks').length - requestsBefore,
      4,
      '3 failures, then one create',
    );
    assert.equal(await queueDepth(), 0);
  });

  test('a single edit still goes through the per-link workflow', async () => {
    const [link] = await createBatch([{ url: 'https://example.com/edit/before' }]);
    await eventually(async () => (fake.linkByKeyword(link!.code) ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the batch to reach Bitly',
    });
    await eventually(async () => ((await queueDepth()) === 0 ? true : undefined));
    const res = await h.api(`/api/v1/links/${link!.code}`, {
      method: 'PATCH',
      json: { url: 'https://example.com/edit/after' },
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('Lifeline-Sync'), 'accepted');
    await h.temporal.client.workflow.getHandle(getSyncWorkflowId(link!.code)).result();
    assert.equal(fake.linkByKeyword(link!.code)?.longUrl, 'https://example.com/edit/after');
    assert.equal(await queueDepth(), 0, 'a single edit does not go through the queue');
  });
});
