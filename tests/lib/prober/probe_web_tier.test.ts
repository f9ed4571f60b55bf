// The black-box prober against the real web tier: `main.ts` in its own process on this file's database, with
// the real Redis as its serving store (no in-process cache, so every answer comes from the store or Postgres).
// A serving-store record tampered to another target is a mismatch that opens an incident, closed by the first
// clean probe once the record is repaired; a stopped front is an error; a probe is never a click, a reader is.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type EntryProcess, harnessWebEnv, startEntry } from '../../../devkit/harness/entry_process.ts';
import { createHarness, eventually, type Harness } from '../../../devkit/harness/harness.ts';
import { recordHistory } from '../../../devkit/harness/histories.ts';
import { setActiveFront } from '../../../lib/failover/active_front.ts';
import type { ProbeDeps } from '../../../lib/prober/probe_deps.ts';
import { PROBE_USER_AGENT, type ProberDeps, runProbe } from '../../../lib/prober/run_probe.ts';
import { createRedisServingStore } from '../../../lib/redirect/redis_serving_store.ts';
import { toServingRecord } from '../../../lib/redirect/serving_record.ts';
import type { ServingStore } from '../../../lib/redirect/serving_store.ts';
import { getLinkByCode } from '../../../lib/stores/link_store.ts';
import { listProbeIncidents } from '../../../lib/stores/probe_store.ts';
import { getFreePort } from '../../../scripts/dev_server.ts';
import { createWorkerDeps } from '../../../workers/worker_deps.ts';
import type { ProbeReport } from '../../../workflows/contract.ts';

const REDIS_URL = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const REDIS_KEY_PREFIX = `llprobe:${randomUUID()}:`;
const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

let h: Harness;
let web: EntryProcess | undefined;
let webUrl: string;
let store: ServingStore;
let deps: ProberDeps & { probe: ProbeDeps };

async function startWeb(): Promise<EntryProcess> {
  const entry = startEntry('main.ts', {
    env: {
      ...harnessWebEnv(h, webUrl),
      REDIS_URL,
      REDIS_KEY_PREFIX,
      RESOLVER_CACHE_MAX: '0',
      CLICK_FLUSH_INTERVAL_MS: '200',
      LOG_LEVEL: 'warn',
    },
  });
  await eventually(async () => ((await fetch(`${webUrl}/readyz`).catch(() => null))?.ok ? true : undefined), {
    timeoutMs: 60_000,
    what: `the web process (${entry.stderr()})`,
  });
  return entry;
}

async function probeCounts(): Promise<Record<string, number>> {
  const { values } = await deps.probe.metrics.probes.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.result), v.value]));
}

before(async () => {
  webUrl = `http://127.0.0.1:${await getFreePort()}`;
  h = await createHarness({
    env: {
      SHORT_BASE_URL: webUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX,
      PROBE_CANARY_URL: 'https://news.example/canary',
      PROBE_SAMPLE: '5',
      PROBE_TIMEOUT_MS: '2000',
    },
  });
  // Three links changed long enough ago to be settled (a younger change may rightly answer its old self).
  await h.db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner, updated_at)
    VALUES ('probeA1', 'https://news.example/a', 'active', 'clean', 'api', 'test', now() - interval '1 hour'),
           ('probeB2', 'https://news.example/b', 'active', 'clean', 'api', 'test', now() - interval '1 hour'),
           ('probeG3', 'https://news.example/g', 'gone', 'clean', 'api', 'test', now() - interval '1 hour')`;
  store = createRedisServingStore({ url: REDIS_URL, keyPrefix: REDIS_KEY_PREFIX });
  deps = createWorkerDeps(h.config, { sql: h.db.sql, logger: h.logger, resolver: h.deps.resolver }) as never;
  web = await startWeb();
});

after(async () => {
  await web?.stop({ killAfterMs: 10_000 });
  await store?.close();
  await h?.close();
});

describe('the prober against the real web tier', () => {
  test('every answer as Postgres says: the canary and the sample are ok, no incident', async (t) => {
    const report = await runProbe(deps);
    const { values } = await deps.probe.metrics.duration.get();
    const sum = values.find((v) => v.metricName === 'lifeline_probe_duration_seconds_sum')?.value ?? 0;
    const count = values.find((v) => v.metricName === 'lifeline_probe_duration_seconds_count')?.value ?? 0;
    t.diagnostic(`first probe: ${count} answers, mean ${((sum / count) * 1000).toFixed(1)} ms from outside`);
    assert.equal(report.canary, 'lifeline-canary');
    assert.deepEqual(
      { checked: report.checked, ok: report.ok, mismatch: report.mismatch, error: report.error },
      { checked: 4, ok: 4, mismatch: 0, error: 0 },
      JSON.stringify(report.failures),
    );
    assert.equal(report.incident, null);
    assert.deepEqual([...(await listProbeIncidents(h.db.sql, 5))], []);
    // The canary is Lifeline's own: a real link, but not in the editors' list.
    const canary = await getLinkByCode(h.db.sql, 'lifeline-canary');
    assert.equal(canary?.owner, 'lifeline:prober');
    const listed = (await (await h.api('/api/v1/links?limit=100')).json()) as { items?: { code: string }[] };
    const codes = (listed.items ?? []).map((l) => l.code);
    assert.ok(codes.includes('probeA1') && !codes.includes('lifeline-canary'), JSON.stringify(codes));
  });

  test('a serving-store record tampered to another target: mismatch, incident opened, closed once repaired', async () => {
    const row = (await getLinkByCode(h.db.sql, 'probeB2'))!;
    const real = toServingRecord(row);
    await store.put({ ...real, url: 'https://news.example/not-b', version: real.version + 1 });
    const direct = await fetch(`${webUrl}/probeB2`, {
      redirect: 'manual',
      headers: { 'user-agent': PROBE_USER_AGENT },
    });
    assert.equal(
      direct.headers.get('location'),
      'https://news.example/not-b',
      'the web tier serves the tamper',
    );

    const before = await probeCounts();
    const failed = await runProbe(deps);
    assert.equal(failed.mismatch, 1, JSON.stringify(failed));
    assert.equal(failed.error, 0);
    assert.deepEqual(failed.failures, [
      {
        code: 'probeB2',
        result: 'mismatch',
        expected: '301 https://news.example/b',
        actual: '301 https://news.example/not-b',
      },
    ]);
    assert.equal(failed.incident?.change, 'opened');
    const [incident] = await listProbeIncidents(h.db.sql, 5);
    assert.equal(incident?.closedAt, null);
    assert.equal(incident?.mismatches, 1);
    assert.equal(incident?.firstFailure.code, 'probeB2');

    // Still wrong: the same incident grows, no second one.
    const again = await runProbe(deps);
    assert.deepEqual(again.incident, { id: incident!.id, change: 'extended' });
    assert.equal((await listProbeIncidents(h.db.sql, 5)).length, 1);

    // Repaired (what reconciliation does with a stale record): the next probe passes and closes the incident.
    await store.delete('probeB2');
    const passed = await runProbe(deps);
    assert.equal(passed.ok, passed.checked, JSON.stringify(passed.failures));
    assert.deepEqual(passed.incident, { id: incident!.id, change: 'closed' });
    const [closed] = await listProbeIncidents(h.db.sql, 5);
    assert.ok(closed?.closedAt instanceof Date);
    assert.equal(closed?.mismatches, 2);

    const after = await probeCounts();
    assert.equal(after.mismatch! - before.mismatch!, 2);
    assert.equal((await deps.probe.metrics.incidentsOpened.get()).values[0]?.value, 1);
  });

  test('through Temporal: the probe workflow on the harness worker reports the same', async () => {
    const worker = await h.startWorker();
    try {
      const workflowId = `probe:test:${randomUUID()}`;
      const report = (await h.temporal.client.workflow.execute('probeWorkflow', {
        workflowId,
        taskQueue: h.taskQueue,
        args: [{ reason: 'test' }],
      })) as ProbeReport;
      assert.equal(report.checked, 4);
      assert.equal(report.ok, 4, JSON.stringify(report.failures));
      await recordHistory('probeWorkflow-ok', workflowId);
    } finally {
      await worker.stop();
    }
  });

  test('while Bitly fronts the short domain, only links Bitly holds are asked, and only their Location compared', async () => {
    await setActiveFront(h.db.sql, { active: 'bitly', since: new Date().toISOString() });
    await h.db.sql`
      INSERT INTO vendor_links (code, vendor, vendor_id, state, synced_url, synced_at)
      VALUES ('probeA1', 'bitly', 'bit.ly/probeA1', 'synced', 'https://news.example/a', now())`;
    try {
      const report = await runProbe(deps);
      assert.deepEqual(
        { checked: report.checked, ok: report.ok },
        { checked: 1, ok: 1 },
        'probeA1 only: the gone link, the one Bitly lacks and the canary (not there before reconciliation) are not asked',
      );
    } finally {
      await setActiveFront(h.db.sql, { active: 'inhouse', since: new Date().toISOString() });
      await h.db.sql`DELETE FROM vendor_links WHERE code = 'probeA1'`;
    }
  });

  test('a probe is never a click; a reader following the same link is', async () => {
    for (let i = 0; i < 3; i++) await runProbe(deps);
    const reader = await fetch(`${webUrl}/probeA1`, {
      redirect: 'manual',
      headers: { 'user-agent': CHROME },
    });
    assert.equal(reader.status, 301);
    // Stopping the web process writes what its click buffer holds.
    await web!.stop({ killAfterMs: 10_000 });
    web = undefined;
    const rows = await h.db.sql<{ code: string; kind: string; clicks: number }[]>`
      SELECT code, kind, sum(clicks)::int AS clicks FROM click_counts GROUP BY code, kind ORDER BY code, kind`;
    assert.deepEqual([...rows], [{ code: 'probeA1', kind: 'human', clicks: 1 }]);
  });

  test('a stopped front: every probe is an error, and an incident opens', async () => {
    const before = await probeCounts();
    const report = await runProbe(deps);
    assert.equal(report.error, 4, JSON.stringify(report));
    assert.equal(report.ok, 0);
    assert.equal(report.failures[0]?.result, 'error');
    assert.match(report.failures[0]!.actual, /ECONNREFUSED/);
    assert.equal(report.incident?.change, 'opened');
    const after = await probeCounts();
    assert.equal(after.error! - before.error!, 4);
    const { values } = await deps.probe.metrics.duration.get();
    assert.ok((values.find((v) => v.metricName === 'lifeline_probe_duration_seconds_count')?.value ?? 0) > 0);
  });
});
