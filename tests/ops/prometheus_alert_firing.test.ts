// A real Prometheus scraping a real Lifeline web process (`main.ts`, what `npm run web` runs, on a test
// database, with an Upstash-protocol serving store) and a real worker (`workers/main.ts`, its health port), and
// evaluating ops/prometheus/lifeline.rules.yml: a storm of requests for unknown codes takes
// LifelineRedirectNotFoundSurge from pending to firing in Prometheus's own /api/v1/alerts; a slow serving store
// fires the redirect latency SLO's fast burn (lifeline_redirect_duration_seconds); Postgres taken away fires
// LifelineRedirectErrors; an escrow export that last succeeded three days ago, with a daily Schedule, fires
// LifelineEscrowStale from the worker's own gauges. The rules are used as written except each `for:` (minutes in
// production) is shortened to 5 s, with 1 s scrape and evaluation intervals. The Grafana dashboard's queries are
// then run against the same server, and every metric they name is one the two processes serve (or is listed in
// tests/ops/dashboard_metrics.ts).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startUpstashFake, type UpstashFake } from '../../devkit/fakes/upstash_fake.ts';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { type EntryProcess, startEntry } from '../../devkit/harness/entry_process.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp_proxy.ts';
import {
  dashboardMetricNames,
  METRICS_EXPORTED_ELSEWHERE,
  recordedNames,
  TEMPORAL_METRICS_AFTER_FIRST_USE,
} from './dashboard_metrics.ts';

const PROMETHEUS = '/usr/bin/prometheus';
const skip = existsSync(PROMETHEUS)
  ? false
  : 'prometheus is not installed (Debian package prometheus; .ci/run installs it)';
const ALERT = 'LifelineRedirectNotFoundSurge';

interface PromAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
  value: string;
}

/** The bearer token /metrics requires (METRICS_TOKEN); Prometheus scrapes with it. */
const METRICS_TOKEN = 'prometheus-test-metrics-token';

let db: TestDatabase;
let web: EntryProcess;
let worker: EntryProcess;
let prometheus: ChildProcess;
let webBase: string;
let promBase: string;
let workerHealthPort: number;
let upstash: UpstashFake;
let pgProxy: TcpProxy;
let postgresCut = false;
const dir = mkdtempSync(join(tmpdir(), 'lifeline-prometheus-'));

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {}
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function promQuery(
  query: string,
): Promise<{ status: string; data?: { result: unknown[] }; error?: string }> {
  const response = await fetch(`${promBase}/api/v1/query?query=${encodeURIComponent(query)}`);
  return (await response.json()) as { status: string; data?: { result: unknown[] }; error?: string };
}

async function alertsNamed(name: string): Promise<PromAlert[]> {
  const response = await fetch(`${promBase}/api/v1/alerts`);
  const body = (await response.json()) as { data: { alerts: PromAlert[] } };
  return body.data.alerts.filter((a) => a.labels.alertname === name);
}

function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

describe('a real Prometheus scraping a running Lifeline web process', { skip }, () => {
  before(async () => {
    db = await createTestDatabase();
    // The web process reaches Postgres through a proxy the test can cut, and its serving store is the Upstash
    // fake (in front of the real Redis), which the test can slow down.
    const dbUrl = new URL(db.url);
    pgProxy = await startTcpProxy({ host: dbUrl.hostname, port: Number(dbUrl.port || 5432) });
    dbUrl.port = String(pgProxy.port);
    upstash = await startUpstashFake({
      redisUrl: process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      token: 'prometheus-test-token',
    });
    const temporalAddress = process.env.LIFELINE_TEST_TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
    const webPort = await getFreePort();
    webBase = `http://127.0.0.1:${webPort}`;
    web = startEntry('main.ts', {
      env: {
        HOME: process.env.HOME ?? dir,
        PORT: String(webPort),
        HOST: '127.0.0.1',
        DATABASE_URL: dbUrl.toString(),
        UPSTASH_REDIS_REST_URL: upstash.url,
        UPSTASH_REDIS_REST_TOKEN: upstash.token,
        REDIS_KEY_PREFIX: `${uniqueId('prom')}:`,
        // A slow store read is waited for (up to 1 s) rather than skipped, so a slow store makes slow redirects.
        SERVING_STORE_TIMEOUT_MS: '1000',
        // The web tier connects to Temporal lazily; nothing here starts a workflow.
        TEMPORAL_ADDRESS: temporalAddress,
        LOG_LEVEL: 'warn',
        SHUTDOWN_DELAY_MS: '0',
        METRICS_TOKEN,
      },
    });
    workerHealthPort = await getFreePort();
    worker = startEntry('workers/main.ts', {
      env: {
        HOME: process.env.HOME ?? dir,
        DATABASE_URL: db.url,
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: uniqueId('prom-worker'),
        WORKER_HEALTH_PORT: String(workerHealthPort),
        WORKER_HEALTH_HOST: '127.0.0.1',
        METRICS_TOKEN,
        LOG_LEVEL: 'warn',
        // A daily export Schedule (it does not run within the test): the worker serves its interval.
        ESCROW_INTERVAL: '1d',
        ESCROW_DIR: join(dir, 'escrow'),
      },
    });
    await waitFor(`the web process on ${webBase} (stderr: ${web.stderr()})`, 60_000, async () =>
      (await fetch(`${webBase}/readyz`)).ok ? true : undefined,
    );
    await waitFor(`the worker's /readyz (stderr: ${worker.stderr()})`, 90_000, async () =>
      (await fetch(`http://127.0.0.1:${workerHealthPort}/readyz`)).ok ? true : undefined,
    );

    // The production rules, with every `for:` shortened so that pending turns to firing within the test.
    const rules = readFileSync(join(ROOT, 'ops', 'prometheus', 'lifeline.rules.yml'), 'utf8');
    const shortened = rules.replace(/^(\s+)for: \S+$/gm, '$1for: 5s');
    assert.notEqual(shortened, rules);
    writeFileSync(join(dir, 'lifeline.rules.yml'), shortened);
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        '  - lifeline.rules.yml',
        'scrape_configs:',
        '  - job_name: lifeline-web',
        '    metrics_path: /metrics',
        '    authorization:',
        '      type: Bearer',
        `      credentials: ${METRICS_TOKEN}`,
        '    static_configs:',
        `      - targets: ['127.0.0.1:${webPort}']`,
        '  - job_name: lifeline-worker',
        '    metrics_path: /metrics',
        '    authorization:',
        '      type: Bearer',
        `      credentials: ${METRICS_TOKEN}`,
        '    static_configs:',
        `      - targets: ['127.0.0.1:${workerHealthPort}']`,
        '',
      ].join('\n'),
    );
    mkdirSync(join(dir, 'data'));
    const promPort = await getFreePort();
    promBase = `http://127.0.0.1:${promPort}`;
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let promErrors = '';
    prometheus.stderr?.on('data', (chunk) => {
      promErrors += chunk;
    });
    await waitFor(`Prometheus on ${promBase} (stderr: ${promErrors})`, 30_000, async () =>
      (await fetch(`${promBase}/-/ready`)).ok ? true : undefined,
    );
  });

  after(async () => {
    await stop(prometheus);
    if (postgresCut) await pgProxy.restore();
    await web?.stop({ killAfterMs: 10_000 });
    await worker?.stop({ killAfterMs: 10_000 });
    await upstash?.stop();
    await pgProxy?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * About 40 requests a second (fewer when answers are slow) for codes nobody minted, until `alert` fires in
   * Prometheus (or 60 s pass). Returns the answers' statuses, the alert as it fired and the states it went through.
   */
  async function stormUntilFiring(alert: string, options: { alreadyPending?: boolean } = {}) {
    let storming = true;
    let sent = 0;
    const statuses = new Map<number, number>();
    const storm = (async () => {
      const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
      while (storming) {
        const codes = Array.from({ length: 4 }, () =>
          Array.from({ length: 7 }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join(''),
        );
        const answers = await Promise.all(
          codes.map((code) => fetch(`${webBase}/${code}`, { redirect: 'manual' })),
        );
        for (const answer of answers) {
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          await answer.body?.cancel();
        }
        sent += codes.length;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const seen: { state: string; atMs: number }[] = [];
    const started = Date.now();
    let firing: PromAlert;
    try {
      firing = await waitFor(`${alert} to fire`, 120_000, async () => {
        const [found] = await alertsNamed(alert);
        if (found && seen.at(-1)?.state !== found.state)
          seen.push({ state: found.state, atMs: Date.now() - started });
        return found?.state === 'firing' ? found : undefined;
      });
    } catch (error) {
      // What the storm got and what Prometheus saw, so a timeout on a loaded machine says which side was slow.
      const targets = (await (await fetch(`${promBase}/api/v1/targets`)).json()) as {
        data?: { activeTargets?: { labels: { job: string }; health: string; lastError: string }[] };
      };
      const rates = await promQuery('lifeline:redirect_requests:rate5m or lifeline:redirect_failures:rate5m');
      throw new Error(
        `${error instanceof Error ? error.message : String(error)}; storm: ${sent} requests (${[...statuses]
          .map(([status, n]) => `${n} × ${status}`)
          .join(', ')}); states: ${JSON.stringify(seen)}; targets: ${JSON.stringify(
          targets.data?.activeTargets?.map((t) => [t.labels.job, t.health, t.lastError]),
        )}; rates: ${JSON.stringify(rates.data?.result)}`,
      );
    } finally {
      storming = false;
      await storm;
    }
    if (!options.alreadyPending) {
      assert.deepEqual(
        seen.map((s) => s.state),
        ['pending', 'firing'],
        `states seen: ${JSON.stringify(seen)}`,
      );
      assert.ok(
        seen[1]!.atMs - seen[0]!.atMs >= 4_000,
        `pending for the 5 s of for: ${JSON.stringify(seen)}`,
      );
    }
    const summary = `${sent} requests (${[...statuses].map(([s, n]) => `${n} × ${s}`).join(', ')}); ${seen
      .map((s) => `${s.state} after ${s.atMs} ms`)
      .join(', ')}`;
    return { sent, statuses, firing, summary };
  }

  test(`requests for unknown codes take ${ALERT} from pending to firing`, async (t) => {
    await waitFor('Prometheus to scrape the web process and the worker', 20_000, async () => {
      const up = await promQuery('up{job=~"lifeline-web|lifeline-worker"} == 1');
      return up.data?.result.length === 2 ? true : undefined;
    });
    assert.deepEqual(await alertsNamed(ALERT), [], 'quiet before the storm');

    const { sent, statuses, firing, summary } = await stormUntilFiring(ALERT);
    assert.deepEqual(statuses, new Map([[404, sent]]));
    t.diagnostic(summary);
    assert.deepEqual(
      { job: firing.labels.job, severity: firing.labels.severity, service: firing.labels.service },
      { job: 'lifeline-web', severity: 'warning', service: 'lifeline' },
    );
    assert.equal(
      firing.annotations.summary,
      '100% of short-link requests are for unknown codes (lifeline-web)',
    );
    assert.equal(firing.annotations.runbook_url, 'docs/OPERATIONS.md#lifelineredirectnotfoundsurge');
    // Postgres answered every lookup: the 503 alert stays quiet.
    assert.deepEqual(await alertsNamed('LifelineRedirectErrors'), []);
  });

  test('a slow serving store makes redirects slow: LifelineRedirectLatencyBudgetBurn fires', async (t) => {
    const ratio = async () => {
      const answer = await promQuery('lifeline:redirect_slow_ratio:rate5m{job="lifeline-web"}');
      return Number(
        (answer.data?.result[0] as { value?: [number, string] } | undefined)?.value?.[1] ?? Number.NaN,
      );
    };
    // On a quiet machine no answer so far took 50 ms and the alert is quiet; a loaded one (these 2 cores are
    // shared) may already have a few slow ones, so what is compared is the share of slow answers.
    const before = await ratio();
    const pendingBefore = (await alertsNamed('LifelineRedirectLatencyBudgetBurn')).length > 0;
    t.diagnostic(`slow share over 5 min before: ${before}; alert already pending: ${pendingBefore}`);
    assert.ok(before < 0.5, `the unknown-code storm was mostly fast (slow share ${before})`);
    // Each lookup now waits ~150 ms for the store before Postgres says "no such code": over the SLO's 50 ms.
    upstash.setDelayMs(150);
    try {
      const { sent, statuses, firing, summary } = await stormUntilFiring(
        'LifelineRedirectLatencyBudgetBurn',
        {
          alreadyPending: pendingBefore,
        },
      );
      t.diagnostic(summary);
      assert.deepEqual(statuses, new Map([[404, sent]]), 'slow, not failing');
      const after = await ratio();
      t.diagnostic(`slow share over 5 min when it fired: ${after}`);
      assert.ok(after > before && after > 0.144, `the slow share rose (${before} → ${after})`);
      assert.deepEqual(
        { job: firing.labels.job, severity: firing.labels.severity },
        { job: 'lifeline-web', severity: 'critical' },
      );
      assert.match(
        firing.annotations.summary ?? '',
        /of redirects took over 50 ms in the last hour \(lifeline-web\)$/,
      );
      assert.equal(firing.annotations.runbook_url, 'docs/OPERATIONS.md#lifelineredirectlatencybudgetburn');
    } finally {
      upstash.setDelayMs(0);
    }
  });

  test('Postgres unreachable: short links answer 503 and LifelineRedirectErrors fires', async (t) => {
    assert.deepEqual(await alertsNamed('LifelineRedirectErrors'), []);
    await pgProxy.cut();
    postgresCut = true;
    try {
      const { statuses, firing, summary } = await stormUntilFiring('LifelineRedirectErrors');
      t.diagnostic(summary);
      assert.ok((statuses.get(503) ?? 0) > 0, summary);
      assert.deepEqual(
        { job: firing.labels.job, severity: firing.labels.severity, service: firing.labels.service },
        { job: 'lifeline-web', severity: 'critical', service: 'lifeline' },
      );
      assert.match(firing.annotations.summary ?? '', /of short links answer 503 \(lifeline-web\)$/);
      // The instance stays in the balancer: its caches can still answer what they hold (ADR 0021).
      const livez = await fetch(`${webBase}/livez`);
      assert.equal(livez.status, 200);
      // And it is still scraped: the gauges it reads from Postgres give up on a read after half a second
      // (lib/shared/scrape_read.ts), inside this Prometheus's 1 s scrape timeout. Reads that waited on the
      // unreachable Postgres held every scrape for 10–20 s, so the target went down and the alert could not fire.
      const up = await waitFor('two scrapes since the cut', 10_000, async () => {
        const result = await promQuery('up{job="lifeline-web"}[3s]');
        const values = (result.data?.result[0] as { values?: [number, string][] } | undefined)?.values ?? [];
        return values.length >= 2 ? values : undefined;
      });
      assert.deepEqual(
        up.map(([, value]) => value),
        up.map(() => '1'),
        'the web target answers every scrape',
      );
    } finally {
      await pgProxy.restore();
      postgresCut = false;
    }
  });

  test('the worker is scraped on its health port: Node and Temporal SDK metrics', async () => {
    const slots = await promQuery('temporal_worker_task_slots_available{job="lifeline-worker"}');
    assert.ok((slots.data?.result.length ?? 0) > 0, JSON.stringify(slots));
    const lag = await promQuery('nodejs_eventloop_lag_p99_seconds{job="lifeline-worker"}');
    assert.equal(lag.data?.result.length, 1);
    assert.deepEqual(await alertsNamed('LifelineWorkerDown'), []);
  });

  test('an export that last succeeded three days ago, on a daily Schedule: LifelineEscrowStale fires', async () => {
    assert.deepEqual(await alertsNamed('LifelineEscrowStale'), []);
    await db.sql`
      INSERT INTO escrow_runs (kind, directory, status, started_at, finished_at)
      VALUES ('export', ${join(dir, 'escrow')}, 'succeeded', now() - interval '3 days', now() - interval '3 days'),
        ('export', ${join(dir, 'escrow')}, 'failed', now() - interval '1 day', now() - interval '1 day')`;
    const firing = await waitFor('LifelineEscrowStale to fire', 30_000, async () => {
      const [found] = await alertsNamed('LifelineEscrowStale');
      return found?.state === 'firing' ? found : undefined;
    });
    assert.deepEqual(
      { job: firing.labels.job, kind: firing.labels.kind, severity: firing.labels.severity },
      { job: 'lifeline-worker', kind: 'export', severity: 'warning' },
    );
    assert.match(
      firing.annotations.summary ?? '',
      /^The last good escrow export is 3d .*old \(lifeline-worker\)$/,
    );
    assert.equal(firing.annotations.runbook_url, 'docs/OPERATIONS.md#lifelineescrowstale');
    // Snapshots are off (SNAPSHOT_INTERVAL unset): no interval, no alert however old.
    const intervals = await promQuery('lifeline_escrow_interval_seconds{job="lifeline-worker"}');
    assert.deepEqual(
      ((intervals.data?.result ?? []) as { metric: { kind: string }; value: [number, string] }[]).map((r) => [
        r.metric.kind,
        r.value[1],
      ]),
      [['export', '86400']],
    );
  });

  test('every metric the dashboard names is served by the web process or the worker, or listed as built elsewhere', async () => {
    const served = new Set<string>();
    for (const url of [`${webBase}/metrics`, `http://127.0.0.1:${workerHealthPort}/metrics`]) {
      const text = await (await fetch(url, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      for (const m of text.matchAll(/^(?:# TYPE )?([a-zA-Z_:][\w:]*)/gm)) served.add(m[1]!);
    }
    assert.ok(served.has('lifeline_vendor_collisions'), 'the worker serves the promise gauges');
    const recorded = recordedNames();
    const missing = [...dashboardMetricNames()]
      .filter(
        ([name]) =>
          !served.has(name) &&
          !served.has(name.replace(/_(bucket|sum|count)$/, '')) &&
          name !== 'up' &&
          !recorded.has(name) &&
          !METRICS_EXPORTED_ELSEWHERE.includes(name) &&
          !TEMPORAL_METRICS_AFTER_FIRST_USE.includes(name),
      )
      .map(([name, panels]) => `${name} (${panels.join(', ')})`);
    assert.deepEqual(missing, []);
  });

  test('every Grafana dashboard query runs on this Prometheus; those over metrics that exist return data', async () => {
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'ops', 'grafana', 'lifeline.json'), 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const failures: string[] = [];
    let withData = 0;
    for (const panel of dashboard.panels) {
      for (const target of panel.targets ?? []) {
        const query = target.expr
          .replaceAll('$__rate_interval', '1m')
          .replaceAll('$__range', '5m')
          .replaceAll('$instance', '.*');
        const answer = await promQuery(query);
        if (answer.status !== 'success') failures.push(`${panel.title}: ${query}: ${answer.error}`);
        else if ((answer.data?.result.length ?? 0) > 0) withData++;
      }
    }
    assert.deepEqual(failures, []);
    const outcomes = await promQuery(
      'sum by (outcome) (rate(lifeline_redirects_total{job="lifeline-web", instance=~".*"}[1m]))',
    );
    const series = (outcomes.data?.result ?? []) as { metric: { outcome: string } }[];
    assert.ok(series.some((r) => r.metric.outcome === 'not_found'));
    // Redirect outcomes and latency, lookups, up (web and worker), requests, Node's event loop, heap, RSS and
    // CPU, and the worker's Temporal metrics.
    assert.ok(withData >= 12, `${withData} queries returned data`);
  });
});
