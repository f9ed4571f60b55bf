// The process metrics as Prometheus reads them: Node's defaults under their standard names, and the redirect
// latency histogram, whose hot-path counting (a fixed array) must export exactly what prom-client's own
// Histogram would for the same observations, and which both redirect paths (Node fast path, Hono route) feed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { parseConfig } from '../../../lib/shared/config.ts';
import { createLogger } from '../../../lib/shared/logger.ts';
import {
  BucketedHistogram,
  createMetrics,
  createProcessMetrics,
  type Metrics,
  REDIRECT_DURATION_BUCKETS_SECONDS,
} from '../../../lib/shared/metrics.ts';
import { insertLink } from '../../../lib/stores/link_store.ts';
import {
  createUnavailableGateway,
  createUnavailableOpsGateway,
} from '../../../lib/temporal/unavailable_gateways.ts';
import { createApp } from '../../../routes/app.ts';
import { serveNode } from '../../../server/node_server.ts';
import { createWebDeps } from '../../../server/web_deps.ts';

/** Sample lines of one metric family, `name{labels} value`, sum lines with their value rounded. */
function samples(text: string, family: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(family))
    .map((line) => {
      const [series, value] = line.split(' ') as [string, string];
      return series.endsWith('_sum') ? `${series} ${Number(value).toFixed(9)}` : line;
    });
}

describe('metric names and the bucketed histogram', () => {
  test("Node's default metrics keep their standard names (no lifeline_ prefix)", async () => {
    for (const registry of [createMetrics({ defaults: true }).registry, createProcessMetrics()]) {
      const text = await registry.metrics();
      for (const name of [
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_seconds',
        'nodejs_eventloop_lag_p99_seconds',
        'nodejs_heap_size_used_bytes',
      ]) {
        assert.match(text, new RegExp(`^${name} `, 'm'), name);
      }
      assert.doesNotMatch(text, /^lifeline_(process|nodejs)_/m);
    }
  });

  test("exports what prom-client's Histogram exports for the same observations", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const fast = new BucketedHistogram({
      name: 'x_duration_seconds',
      help: 'h',
      bucketsSeconds: REDIRECT_DURATION_BUCKETS_SECONDS,
      registers: [ours],
    });
    const reference = new Histogram({
      name: 'x_duration_seconds',
      help: 'h',
      buckets: [...REDIRECT_DURATION_BUCKETS_SECONDS],
      registers: [theirs],
    });
    // On and around every bound (a bound itself belongs to its bucket), below the first, above the last.
    const seconds = [0, 0.0001, 3, 1.5];
    for (const bound of REDIRECT_DURATION_BUCKETS_SECONDS) seconds.push(bound, bound * 0.99, bound * 1.01);
    for (const s of seconds) {
      fast.observeMs(s * 1000);
      reference.observe(s);
    }
    const a = samples(await ours.metrics(), 'x_duration_seconds');
    const b = samples(await theirs.metrics(), 'x_duration_seconds');
    assert.equal(a.length, REDIRECT_DURATION_BUCKETS_SECONDS.length + 3);
    assert.deepEqual(a, b);
    assert.ok(a.includes('x_duration_seconds_bucket{le="0.05"} 22'), a.join('\n'));
    fast.reset();
    assert.match(await ours.metrics(), /^x_duration_seconds_count 0$/m);
  });
});

describe('lifeline_redirect_duration_seconds on both redirect paths', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
    await insertLink(db.sql, {
      code: 'timed1',
      targetUrl: 'https://news.example/timed',
      status: 'active',
      origin: 'api',
      owner: 'test',
    });
  });
  after(async () => {
    await db?.drop();
  });

  async function count(metrics: Metrics): Promise<number> {
    const m = /^lifeline_redirect_duration_seconds_count (\S+)$/m.exec(await metrics.registry.metrics());
    return Number(m?.[1]);
  }

  test('the Node fast path and the Hono route each count every answer, unknown codes included', async () => {
    const metrics = createMetrics();
    const config = parseConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'silent' });
    const deps = await createWebDeps(config, {
      sql: db.sql,
      logger: createLogger({ level: 'silent' }),
      metrics,
      workflows: createUnavailableGateway('metrics test'),
      ops: createUnavailableOpsGateway('metrics test'),
    });
    const app = createApp(deps);
    const server = await serveNode(app.fetch, { port: 0, host: '127.0.0.1', fastPath: deps });
    try {
      assert.equal(await count(metrics), 0);
      // Fast path: a Postgres lookup, an LRU hit (answered synchronously), an unknown code, a HEAD.
      for (const [path, method] of [
        ['/timed1', 'GET'],
        ['/timed1', 'GET'],
        ['/NoSuchCode9', 'GET'],
        ['/timed1', 'HEAD'],
      ] as const) {
        const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
          method,
          redirect: 'manual',
        });
        await response.body?.cancel();
      }
      assert.equal(await count(metrics), 4);
      // The Hono route (Deno, and requests the fast path does not take).
      const viaHono = await app.request('/timed1', { redirect: 'manual' });
      assert.equal(viaHono.status, 301);
      assert.equal(await count(metrics), 5);
      // Other routes are not redirects.
      await app.request('/healthz');
      assert.equal(await count(metrics), 5);
      const text = await metrics.registry.metrics();
      assert.match(text, /^lifeline_redirect_duration_seconds_bucket\{le="0.05"\} \d+$/m);
      assert.match(text, /^lifeline_redirect_duration_seconds_bucket\{le="\+Inf"\} 5$/m);
      assert.match(text, /^# TYPE lifeline_redirect_duration_seconds histogram$/m);
    } finally {
      await server.close(500);
      await deps.close();
    }
  });
});
