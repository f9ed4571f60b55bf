// A real Prometheus scraping a real worker (`workers/main.ts`) whose prober asks a real web process (`main.ts`)
// for the canary, and evaluating ops/prometheus/lifeline.rules.yml as tests/ops/prometheus_alert_firing.test.ts
// does (each `for:` shortened to 5 s, 1 s scrape and evaluation). While the front answers, the availability SLO's
// alerts stay quiet; once the front is stopped, the probes fail and LifelineProbeBudgetBurnFast goes from pending
// to firing, with the incident open in lifeline_probe_incidents_open. Probes are started by triggering the worker's
// own `probe:{taskQueue}` Schedule (its interval is a minute; the test cannot wait for many of those).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { type EntryProcess, startEntry } from '../../devkit/harness/entry_process.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { getProbeScheduleId } from '../../workflows/contract.ts';

const PROMETHEUS = '/usr/bin/prometheus';
const skip = existsSync(PROMETHEUS)
  ? false
  : 'prometheus is not installed (Debian package prometheus; .ci/run installs it)';
const ALERT = 'LifelineProbeBudgetBurnFast';
const METRICS_TOKEN = 'prometheus-probe-test-metrics-token';

interface PromAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
}

let db: TestDatabase;
let web: EntryProcess | undefined;
let worker: EntryProcess;
let prometheus: ChildProcess;
let connection: Connection;
let client: Client;
let webBase: string;
let promBase: string;
let workerHealthPort: number;
const taskQueue = uniqueId('prom-probe');
const dir = mkdtempSync(join(tmpdir(), 'lifeline-prometheus-probe-'));

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {}
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function promValue(query: string): Promise<number | undefined> {
  const response = await fetch(`${promBase}/api/v1/query?query=${encodeURIComponent(query)}`);
  const body = (await response.json()) as { data?: { result: { value: [number, string] }[] } };
  const value = body.data?.result[0]?.value[1];
  return value === undefined ? undefined : Number(value);
}

async function alertsNamed(name: string): Promise<PromAlert[]> {
  const response = await fetch(`${promBase}/api/v1/alerts`);
  const body = (await response.json()) as { data: { alerts: PromAlert[] } };
  return body.data.alerts.filter((a) => a.labels.alertname === name);
}

/** Triggers the probe Schedule every 1.5 s (a second apart at least: its runs' IDs are to the second). */
function keepProbing(): { stop(): Promise<void> } {
  let going = true;
  const loop = (async () => {
    const handle = client.schedule.getHandle(getProbeScheduleId(taskQueue));
    while (going) {
      await handle.trigger().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 1_500));
    }
  })();
  return {
    async stop() {
      going = false;
      await loop;
    },
  };
}

describe('a real Prometheus watching the prober', { skip }, () => {
  before(async () => {
    db = await createTestDatabase();
    const temporalAddress = process.env.LIFELINE_TEST_TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
    connection = await Connection.connect({ address: temporalAddress });
    client = new Client({ connection });
    const webPort = await getFreePort();
    webBase = `http://127.0.0.1:${webPort}`;
    web = startEntry('main.ts', {
      env: {
        PORT: String(webPort),
        HOST: '127.0.0.1',
        DATABASE_URL: db.url,
        SHORT_BASE_URL: webBase,
        TEMPORAL_ADDRESS: temporalAddress,
        LOG_LEVEL: 'warn',
        SHUTDOWN_DELAY_MS: '0',
      },
    });
    await waitFor(`the web process (stderr: ${web.stderr()})`, 60_000, async () =>
      (await fetch(`${webBase}/readyz`)).ok ? true : undefined,
    );
    workerHealthPort = await getFreePort();
    worker = startEntry('workers/main.ts', {
      env: {
        DATABASE_URL: db.url,
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_HEALTH_PORT: String(workerHealthPort),
        WORKER_HEALTH_HOST: '127.0.0.1',
        METRICS_TOKEN,
        SHORT_BASE_URL: webBase,
        PROBE_INTERVAL: '1m',
        PROBE_CANARY_URL: 'https://news.example/canary',
        PROBE_TIMEOUT_MS: '1000',
        DRILL_INTERVAL: 'off',
        LOG_LEVEL: 'warn',
      },
    });
    await waitFor(`the worker's /readyz (stderr: ${worker.stderr()})`, 90_000, async () =>
      (await fetch(`http://127.0.0.1:${workerHealthPort}/readyz`)).ok ? true : undefined,
    );
    await waitFor('the probe Schedule', 30_000, async () =>
      (await client.schedule.getHandle(getProbeScheduleId(taskQueue)).describe()) ? true : undefined,
    );

    const rules = readFileSync(join(ROOT, 'ops', 'prometheus', 'lifeline.rules.yml'), 'utf8');
    writeFileSync(join(dir, 'lifeline.rules.yml'), rules.replace(/^(\s+)for: \S+$/gm, '$1for: 5s'));
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        '  - lifeline.rules.yml',
        'scrape_configs:',
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
      { stdio: ['ignore', 'ignore', 'ignore'] },
    );
    await waitFor(`Prometheus on ${promBase}`, 30_000, async () =>
      (await fetch(`${promBase}/-/ready`)).ok ? true : undefined,
    );
  });

  after(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((r) => prometheus.once('exit', r));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await client?.schedule
      .getHandle(getProbeScheduleId(taskQueue))
      .delete()
      .catch(() => undefined);
    await web?.stop({ killAfterMs: 10_000 });
    await worker?.stop({ killAfterMs: 10_000 });
    await connection?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('probes pass while the front answers; a stopped front takes the fast burn from pending to firing', async (t) => {
    const probing = keepProbing();
    try {
      await waitFor('ok probes in Prometheus', 60_000, async () =>
        ((await promValue('sum(lifeline_probe_total{result="ok"})')) ?? 0) >= 3 ? true : undefined,
      );
      assert.equal(await promValue('sum(lifeline_probe_total{result!="ok"})'), 0);
      assert.equal(await promValue('lifeline_probe_incidents_open'), 0);
      assert.deepEqual(await alertsNamed(ALERT), [], 'quiet while every probe passes');

      await web!.stop({ killAfterMs: 10_000 });
      web = undefined;
      const seen: { state: string; atMs: number }[] = [];
      const started = Date.now();
      const firing = await waitFor(`${ALERT} to fire`, 90_000, async () => {
        const [found] = await alertsNamed(ALERT);
        if (found && seen.at(-1)?.state !== found.state)
          seen.push({ state: found.state, atMs: Date.now() - started });
        return found?.state === 'firing' ? found : undefined;
      });
      t.diagnostic(seen.map((s) => `${s.state} after ${s.atMs} ms`).join(', '));
      assert.deepEqual(
        seen.map((s) => s.state),
        ['pending', 'firing'],
      );
      assert.deepEqual(
        { job: firing.labels.job, severity: firing.labels.severity, service: firing.labels.service },
        { job: 'lifeline-worker', severity: 'critical', service: 'lifeline' },
      );
      assert.match(
        firing.annotations.summary ?? '',
        /^[\d.]+% of probes of the short domain failed in the last hour \(lifeline-worker\)$/,
      );
      assert.equal(firing.annotations.runbook_url, 'docs/OPERATIONS.md#lifelineprobebudgetburn');
      assert.ok(((await promValue('sum(lifeline_probe_total{result="error"})')) ?? 0) > 0);
      assert.equal(await promValue('lifeline_probe_incidents_open'), 1);
      assert.ok(((await promValue('lifeline_probe_incidents_opened_total')) ?? 0) >= 1);
    } finally {
      await probing.stop();
    }
  });
});
