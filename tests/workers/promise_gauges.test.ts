// The promise gauges the worker's /metrics serves (workers/main.ts registers them exactly so), each moved by the
// real event: a collision Bitly answered with a silent random back-half (the Bitly fake), a reconciliation that
// finds drift and strays, an escrow export run by its workflow. Real Postgres, Temporal and worker; the reads are
// the ones workers/main.ts wires.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { readEscrowAges } from '../../lib/escrow/escrow_age.ts';
import { readReconcileDrift } from '../../lib/reconcile/reconcile_drift.ts';
import {
  registerEscrowAgeGauges,
  registerReconcileDriftGauges,
  registerVendorCollisionGauge,
} from '../../lib/shared/promise_gauges.ts';
import { scrapeRead } from '../../lib/shared/scrape_read.ts';
import { BITLY_OWN_TAG } from '../../lib/vendors/bitly.ts';
import { countVendorCollisions } from '../../lib/vendors/count_vendor_collisions.ts';

let fake: BitlyFake;
let h: Harness;
let work: string;

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'lifeline-promise-gauges-'));
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({
    env: { ...fake.env(), ESCROW_INTERVAL: '1d', ESCROW_DIR: join(work, 'escrow') },
  });
  await h.startWorker({
    vendors: { bitly: { timeoutMs: 2_000 }, retryBaseMs: 50, retryMaxMs: 400, publishWaitMs: 5_000 },
  });
});
after(async () => {
  await h.close();
  await fake.stop();
  rmSync(work, { recursive: true, force: true });
});

/**
 * A fresh registry with the gauges as the worker registers them. Each call builds a new one: the gauges keep
 * a read for a few seconds, and each step of a test must see Postgres as it is now.
 */
async function scrape(): Promise<string> {
  const registry = new Registry();
  registerVendorCollisionGauge(registry, () => countVendorCollisions(h.db.sql));
  registerReconcileDriftGauges(registry, () => readReconcileDrift(h.db.sql));
  registerEscrowAgeGauges(registry, () => readEscrowAges(h.db.sql, h.config));
  return registry.metrics();
}

/** The value of one series in a scrape, or undefined when it is not there. */
function seriesValue(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function insertLink(code: string, url: string): Promise<void> {
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    VALUES (${code}, ${url}, 'active', 'clean', 'api', 'test')`;
}

async function synced(code: string): Promise<void> {
  await h.deps.workflows.syncLink(code, 'test');
  await h.temporal.client.workflow.getHandle(`sync:${code}`).result();
}

describe('promise gauges on the worker', () => {
  test('a back-half Bitly silently answered with another: lifeline_vendor_collisions counts it', async () => {
    assert.equal(seriesValue(await scrape(), 'lifeline_vendor_collisions{vendor="bitly"}'), 0);
    // Someone else holds our code on Bitly; this plan answers a taken keyword with a random back-half.
    fake.takenKeyword = 'silent-random';
    try {
      fake.seed({ keyword: 'PgTaken1', longUrl: 'https://theirs.example/one' });
      await insertLink('PgTaken1', 'https://news.example/ours-one');
      await synced('PgTaken1');
    } finally {
      fake.takenKeyword = 'conflict';
    }
    const [row] = await h.db.sql`SELECT state FROM vendor_links WHERE code = 'PgTaken1' AND vendor = 'bitly'`;
    assert.equal(row?.state, 'collision');
    assert.equal(seriesValue(await scrape(), 'lifeline_vendor_collisions{vendor="bitly"}'), 1);
  });

  test('a reconciliation that finds drift and strays: lifeline_reconcile_drift per leg and kind', async () => {
    const before = await scrape();
    assert.doesNotMatch(before, /^lifeline_reconcile_drift\{/m, 'no completed run yet: no series');
    assert.equal(seriesValue(before, 'lifeline_reconcile_last_run_timestamp_seconds'), 0);

    // Missing on Bitly (never synced), and a stray of ours (tagged, a random back-half, an hour old).
    await insertLink('PgMiss1', 'https://news.example/missing-on-bitly');
    fake.seed({
      longUrl: 'https://news.example/stray/',
      tags: [BITLY_OWN_TAG],
      keyword: 'Zq9Stray',
      createdAt: new Date(Date.now() - 3_600_000),
    });
    const check = async (repair: boolean) =>
      h.temporal.client.workflow.execute('reconcileLinksWorkflow', {
        taskQueue: h.taskQueue,
        workflowId: uniqueId('reconcile:promise-gauges'),
        args: [{ reason: 'test', repair }],
      });

    await check(false);
    const found = await scrape();
    assert.equal(seriesValue(found, 'lifeline_reconcile_drift{leg="bitly",drift="missing"}'), 1);
    assert.equal(seriesValue(found, 'lifeline_reconcile_drift{leg="bitly",drift="stray"}'), 1);
    // The collision recorded by the test before is drift Bitly's leg finds again every run.
    assert.equal(seriesValue(found, 'lifeline_reconcile_drift{leg="bitly",drift="collision"}'), 1);
    assert.equal(seriesValue(found, 'lifeline_reconcile_drift{leg="expiry",drift="missing"}'), 0);
    // A check repairs nothing.
    assert.equal(seriesValue(found, 'lifeline_reconcile_drift_unrepaired{leg="bitly"}'), 3);
    assert.equal(seriesValue(found, 'lifeline_reconcile_drift_unrepaired{leg="expiry"}'), 0);
    const finished = seriesValue(found, 'lifeline_reconcile_last_run_timestamp_seconds');
    assert.ok(finished !== undefined && Math.abs(finished - Date.now() / 1000) < 300, `${finished}`);

    await check(true);
    const repaired = await scrape();
    assert.equal(seriesValue(repaired, 'lifeline_reconcile_drift{leg="bitly",drift="missing"}'), 1);
    // The collision needs a human; the missing link and the stray were repaired.
    assert.equal(seriesValue(repaired, 'lifeline_reconcile_drift_unrepaired{leg="bitly"}'), 1);

    await check(true);
    const clean = await scrape();
    assert.equal(seriesValue(clean, 'lifeline_reconcile_drift{leg="bitly",drift="missing"}'), 0);
    assert.equal(seriesValue(clean, 'lifeline_reconcile_drift{leg="bitly",drift="stray"}'), 0);
  });

  test('an escrow export run: lifeline_escrow_last_success_age_seconds starts again from 0', async () => {
    const before = await scrape();
    assert.equal(seriesValue(before, 'lifeline_escrow_interval_seconds{kind="export"}'), 86_400);
    assert.equal(seriesValue(before, 'lifeline_escrow_last_success_age_seconds{kind="export"}'), undefined);
    // SNAPSHOT_INTERVAL is unset: no Schedule, no interval series.
    assert.equal(seriesValue(before, 'lifeline_escrow_interval_seconds{kind="snapshot"}'), undefined);

    // A failed run long ago and nothing since: the age counts from that first attempt.
    await h.db.sql`
      INSERT INTO escrow_runs (kind, directory, status, error, started_at, finished_at)
      VALUES ('export', ${join(work, 'escrow')}, 'failed', 'disk full', now() - interval '3 days',
        now() - interval '3 days')`;
    const late = seriesValue(await scrape(), 'lifeline_escrow_last_success_age_seconds{kind="export"}');
    assert.ok(late !== undefined && late >= 3 * 86_400, `${late}`);

    await h.temporal.client.workflow.execute('escrowExportWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: uniqueId('escrow:promise-gauges'),
      args: [{ reason: 'test' }],
    });
    const fresh = seriesValue(await scrape(), 'lifeline_escrow_last_success_age_seconds{kind="export"}');
    assert.ok(fresh !== undefined && fresh < 300, `${fresh}`);
  });

  test('one read of Postgres answers the scrapes within the cache window; a failed read keeps the last values', async () => {
    let reads = 0;
    let fail = false;
    const registry = new Registry();
    registerVendorCollisionGauge(registry, async () => {
      reads++;
      if (fail) throw new Error('Postgres is away');
      return { bitly: 7 };
    });
    await registry.metrics();
    await registry.metrics();
    assert.equal(reads, 1);
    const read = scrapeRead(
      async () => {
        reads++;
        throw new Error('Postgres is away');
      },
      { reuseMs: 0 },
    );
    assert.equal(await read(), null);
    fail = true;
    assert.match(await registry.metrics(), /^lifeline_vendor_collisions\{vendor="bitly"\} 7$/m);
  });
});
