// The worker's health port (workers/health_server.ts) in front of a real Lifeline worker on the real dev server:
// /readyz through every state the rule knows (starting, created but not running, running, Postgres away,
// Temporal away, draining), /livez throughout, and /metrics joining Node's metrics with the Temporal SDK's own
// (its Prometheus exporter, durations in seconds) after a real publish workflow ran.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NativeConnection } from '@temporalio/worker';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { waitForPostLink, wordpressEvent } from '../../devkit/harness/wordpress_events.ts';
import { createDrainState } from '../../lib/health/drain_state.ts';
import { checkWorkerReadiness } from '../../lib/health/worker_readiness.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createProcessMetrics } from '../../lib/shared/metrics.ts';
import { createSql, type Sql } from '../../lib/stores/sql.ts';
import {
  createLifelineWorker,
  describeWorkerStatus,
  installTemporalRuntime,
  type LifelineWorker,
} from '../../workers/create_worker.ts';
import {
  findFreeLoopbackPort,
  startWorkerHealthServer,
  type WorkerHealthServer,
} from '../../workers/health_server.ts';
import { createWorkerDeps } from '../../workers/worker_deps.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp_proxy.ts';

const logger = createLogger({ level: 'silent' });
// The Runtime (one per process) with the SDK's Prometheus exporter, before the harness's first connection.
const sdkMetricsAddress = `127.0.0.1:${await findFreeLoopbackPort()}`;
installTemporalRuntime(logger, { metricsAddress: sdkMetricsAddress });

let h: Harness;
let pgProxy: TcpProxy;
let temporalProxy: TcpProxy;
let sql: Sql;
let connection: NativeConnection;
let worker: LifelineWorker | undefined;
let running: Promise<void> | undefined;
let health: WorkerHealthServer;
const METRICS_TOKEN = 'worker-metrics-test-token';
const drain = createDrainState();
let base = '';
const cut = { postgres: false, temporal: false };

before(async () => {
  h = await createHarness();
  const url = new URL(h.db.url);
  pgProxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.port = String(pgProxy.port);
  sql = createSql({ url: url.toString(), max: 4 });
  const [host, port] = h.temporal.address.split(':') as [string, string];
  temporalProxy = await startTcpProxy({ host, port: Number(port) });
  connection = await NativeConnection.connect({ address: `127.0.0.1:${temporalProxy.port}` });
  health = await startWorkerHealthServer({
    host: '127.0.0.1',
    port: 0,
    registry: createProcessMetrics(),
    sdkMetricsAddress,
    metricsToken: METRICS_TOKEN,
    logger,
    readiness: () =>
      checkWorkerReadiness({
        sql,
        drain,
        workerStatus: () => (worker ? describeWorkerStatus(worker) : undefined),
        pingTemporal: () =>
          connection.withDeadline(Date.now() + 1_000, () => connection.workflowService.getSystemInfo({})),
      }),
  });
  base = `http://127.0.0.1:${health.port}`;
});

after(async () => {
  if (cut.postgres) await pgProxy.restore();
  if (cut.temporal) await temporalProxy.restore();
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running?.catch(() => {});
  await health?.close();
  await connection?.close();
  await sql?.end({ timeout: 1 });
  await temporalProxy?.close();
  await pgProxy?.close();
  await h?.close();
});

async function readyz(): Promise<{
  status: number;
  body: { status: string; checks?: Record<string, string> };
}> {
  const response = await fetch(`${base}/readyz`);
  return { status: response.status, body: (await response.json()) as { status: string } };
}

async function livez(): Promise<number> {
  return (await fetch(`${base}/livez`)).status;
}

describe("the worker's /livez and /readyz", () => {
  test('not ready until the worker exists and runs; alive meanwhile', async () => {
    assert.equal(await livez(), 200);
    assert.deepEqual(await readyz(), {
      status: 503,
      body: {
        status: 'unavailable',
        checks: { worker: 'starting', pollers: 'starting', temporal: 'ok', postgres: 'ok' },
      },
    });
    worker = await createLifelineWorker({
      connection,
      namespace: 'default',
      taskQueue: h.taskQueue,
      ...(h.temporal.workflowBundle ? { workflowBundle: h.temporal.workflowBundle } : {}),
      deps: createWorkerDeps(h.config, {
        sql: h.db.sql,
        logger,
        resolver: h.deps.resolver,
        servingStore: h.deps.servingStore,
      }),
    });
    assert.equal((await readyz()).body.checks?.worker, 'initialized');
    running = worker.run();
    const ready = await eventually(async () => {
      const r = await readyz();
      return r.status === 200 ? r : undefined;
    });
    assert.deepEqual(ready.body, {
      status: 'ready',
      checks: { worker: 'running', pollers: 'polling', temporal: 'ok', postgres: 'ok' },
    });
  });

  test('a publish runs through this worker, and /metrics has the SDK metrics in seconds beside Node’s', async () => {
    const event = wordpressEvent('post.published', { postId: 4242 });
    assert.equal((await h.webhook(event)).status, 202);
    await waitForPostLink(h, 'news', 4242, (link) => link.status === 'active');
    const response = await fetch(`${base}/metrics`, {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    assert.match(text, /^process_cpu_seconds_total /m);
    assert.match(text, /^nodejs_eventloop_lag_p99_seconds /m);
    // The publish's short steps are local activities (ADR 0094): the SDK counts them under their own family.
    assert.match(
      text,
      new RegExp(
        `^temporal_local_activity_execution_latency_count\\{.*activity_type="mintCode".*task_queue="${h.taskQueue}"`,
        'm',
      ),
    );
    // useSecondsForDurations: bucket bounds in seconds (milliseconds would start at le="1").
    const buckets = [
      ...text.matchAll(/^temporal_local_activity_execution_latency_bucket\{[^}]*le="([^"]+)"[^}]*\} /gm),
    ].map((m) => m[1]);
    assert.ok(buckets.length > 0, 'activity latency histogram present');
    assert.ok(
      buckets.some((le) => le !== '+Inf' && Number(le) < 1),
      `sub-second buckets: ${buckets.join(', ')}`,
    );
    // One family per name: Node's and the SDK's sets do not overlap.
    const families = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
    assert.equal(new Set(families).size, families.length);
  });

  test('Postgres away: not ready (activities need it); back when it returns', async () => {
    await pgProxy.cut();
    cut.postgres = true;
    const down = await readyz();
    assert.equal(down.status, 503);
    assert.equal(down.body.checks?.postgres, 'down');
    assert.equal(await livez(), 200);
    await pgProxy.restore();
    cut.postgres = false;
    await eventually(async () => ((await readyz()).status === 200 ? true : undefined), { timeoutMs: 10_000 });
  });

  test('Temporal away: not ready; back when it returns', async () => {
    await temporalProxy.cut();
    cut.temporal = true;
    const started = Date.now();
    const down = await readyz();
    assert.equal(down.status, 503);
    assert.equal(down.body.checks?.temporal, 'down');
    assert.ok(Date.now() - started < 2_500, 'the probe is bounded');
    await temporalProxy.restore();
    cut.temporal = false;
    await eventually(async () => ((await readyz()).status === 200 ? true : undefined), { timeoutMs: 20_000 });
  });

  test('draining: /readyz 503 at once, /livez and /metrics still answer while the worker drains', async () => {
    drain.startDraining();
    assert.deepEqual(await readyz(), { status: 503, body: { status: 'draining' } });
    worker!.shutdown();
    assert.equal(await livez(), 200);
    assert.equal(
      (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })).status,
      200,
    );
    await running;
    assert.deepEqual(await readyz(), { status: 503, body: { status: 'draining' } });
  });
});
