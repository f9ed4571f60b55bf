// Outages under real load over real HTTP: the redirect hot path keeps answering when Redis or Postgres goes
// away mid-run, and no request waits unboundedly.
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { eventually } from '../../devkit/harness/harness.ts';
import { createConfiguredResolver } from '../../lib/redirect/create_resolver.ts';
import { parseConfig } from '../../lib/shared/config.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createMetrics, type Metrics } from '../../lib/shared/metrics.ts';
import { insertLink } from '../../lib/stores/link_store.ts';
import { createSql, type Sql } from '../../lib/stores/sql.ts';
import {
  createUnavailableGateway,
  createUnavailableOpsGateway,
} from '../../lib/temporal/unavailable_gateways.ts';
import { createApp } from '../../routes/app.ts';
import type { WebDeps } from '../../routes/app_env.ts';
import { loadStaticFiles } from '../../routes/static.ts';
import { type RunningServer, serveNode } from '../../server/node_server.ts';
import { createWebDeps } from '../../server/web_deps.ts';
import { type PrivateRedis, startPrivateRedis } from '../helpers/private_redis.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp_proxy.ts';

const CLIENTS = 32;
/**
 * No answer within this is a failure: the hot path must never hang. The resolver's own worst case is a
 * Postgres lookup timing out (3 s) and then a late serving-store read (1 s); this leaves room for a loaded CI
 * machine (these tests share two cores with others) without letting an unbounded wait pass.
 */
const REQUEST_TIMEOUT_MS = 6_000;

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db.drop();
});

async function createCodes(prefix: string, count: number): Promise<string[]> {
  const codes = Array.from({ length: count }, (_, i) => `${prefix}${i}`);
  for (const code of codes) {
    await insertLink(db.sql, {
      code,
      targetUrl: `https://news.example/${code}`,
      status: 'active',
      origin: 'api',
      owner: 'test',
    });
  }
  return codes;
}

interface Web {
  server: RunningServer;
  deps: WebDeps;
  metrics: Metrics;
  close(): Promise<void>;
}

async function startWeb(env: Record<string, string>, sql: Sql): Promise<Web> {
  const config = parseConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', ...env });
  const metrics = createMetrics();
  const deps = await createWebDeps(config, {
    sql,
    logger: createLogger({ level: 'silent' }),
    metrics,
    workflows: createUnavailableGateway('outage test'),
    ops: createUnavailableOpsGateway('outage test'),
  });
  const app = createApp(deps, { staticFiles: await loadStaticFiles() });
  const server = await serveNode(app.fetch, { port: 0, host: '127.0.0.1' });
  return {
    server,
    deps,
    metrics,
    async close() {
      await server.close(1_000);
      await deps.close();
    },
  };
}

interface LoadResult {
  total: number;
  /** Answers other than 3xx (status → count), timeouts and socket errors included ("timeout", "error"). */
  failures: Map<string, number>;
  maxLatencyMs: number;
  p99LatencyMs: number;
}

/** CLIENTS keep-alive clients request `codes` round-robin for `durationMs`; `during` runs meanwhile. */
async function load(
  port: number,
  codes: string[],
  durationMs: number,
  during: () => Promise<void>,
): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const failures = new Map<string, number>();
  const fail = (why: string) => failures.set(why, (failures.get(why) ?? 0) + 1);
  let total = 0;
  let maxLatencyMs = 0;
  const latencies: number[] = [];
  const end = Date.now() + durationMs;
  const one = (code: string) =>
    new Promise<void>((resolve) => {
      const started = Date.now();
      const req = request(
        { host: '127.0.0.1', port, path: `/${code}`, agent, timeout: REQUEST_TIMEOUT_MS },
        (res) => {
          res.resume();
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status < 300 || status >= 400) fail(String(status));
            maxLatencyMs = Math.max(maxLatencyMs, Date.now() - started);
            latencies.push(Date.now() - started);
            resolve();
          });
        },
      );
      req.on('timeout', () => {
        fail('timeout');
        req.destroy();
      });
      req.on('error', (err) => {
        if (!req.destroyed || err.message !== 'socket hang up') fail('error');
        resolve();
      });
      req.end();
    });
  let next = 0;
  const client = async () => {
    while (Date.now() < end) {
      total++;
      await one(codes[next++ % codes.length]!);
    }
  };
  const clients = Promise.all(Array.from({ length: CLIENTS }, client));
  await during();
  await clients;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const p99LatencyMs = latencies[Math.floor(latencies.length * 0.99)] ?? 0;
  return { total, failures, maxLatencyMs, p99LatencyMs };
}

async function metric(metrics: Metrics, layer: string, result: string): Promise<number> {
  const { values } = await metrics.lookups.get();
  return values.find((v) => v.labels.layer === layer && v.labels.result === result)?.value ?? 0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('redirects under load while the serving store fails', () => {
  let redis: PrivateRedis;
  let web: Web;
  let codes: string[];
  before(async () => {
    codes = await createCodes('redisout', 200);
    redis = await startPrivateRedis();
    // LRU off: every request goes to the store, so its failure is felt by every request.
    web = await startWeb({ REDIS_URL: redis.url, RESOLVER_CACHE_MAX: '0' }, db.sql);
    const store = web.deps.servingStore!;
    await eventually(async () => ((await store.get('probe')) === null ? true : undefined));
    for (const code of codes) await web.deps.resolver.refresh(code);
  });
  after(async () => {
    await web.close();
    await redis.stop();
  });

  test('Redis frozen (SIGSTOP), then killed, mid-load: zero non-3xx answers, Postgres answers', async () => {
    const result = await load(web.server.port, codes, 4_500, async () => {
      await sleep(1_000);
      assert.ok((await metric(web.metrics, 'serving_store', 'hit')) > 0, 'the store answered before');
      redis.freeze();
      await sleep(1_500);
      await redis.stop();
    });
    process.stderr.write(
      `[outage redis] ${result.total} requests, p99 ${result.p99LatencyMs} ms, max ${result.maxLatencyMs} ms, failures ${JSON.stringify([...result.failures])}\n`,
    );
    assert.deepEqual([...result.failures], []);
    // Real load even on a busy shared machine (a quiet one does several thousand).
    assert.ok(result.total > 300, `${result.total} requests`);
    assert.ok((await metric(web.metrics, 'serving_store', 'error')) > 0);
    assert.ok((await metric(web.metrics, 'postgres', 'hit')) > 0, 'Postgres answered after Redis went');
  });
});

describe('redirects under load while Postgres is cut off', () => {
  let proxy: TcpProxy;
  let sql: Sql;
  let redis: PrivateRedis;
  let web: Web;
  let cached: string[];
  let postgresOnly: string[];
  before(async () => {
    // Few codes and a short LRU TTL: during the cut, answers alternate between LRU and serving-store hits.
    cached = await createCodes('pgout', 40);
    postgresOnly = await createCodes('pgonly', 5);
    redis = await startPrivateRedis();
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(db.url).port || 5432) });
    const viaProxy = new URL(db.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    sql = createSql({ url: viaProxy.toString(), max: 4 });
    web = await startWeb(
      {
        REDIS_URL: redis.url,
        RESOLVER_CACHE_TTL_MS: '1000',
        DATABASE_URL: viaProxy.toString(),
        DATABASE_POOL_SIZE: '4',
      },
      sql,
    );
    // The worker side writes the serving store (from Postgres directly, not through the proxy).
    const writer = createConfiguredResolver(parseConfig({ DATABASE_URL: db.url, REDIS_URL: redis.url }), {
      sql: db.sql,
      role: 'worker',
    });
    await eventually(async () => {
      await writer.refresh(cached[0]!);
      return true;
    });
    for (const code of cached) await writer.refresh(code);
    await writer.close();
    await eventually(async () => ((await web.deps.servingStore!.get(cached[0]!)) ? true : undefined));
  });
  after(async () => {
    await web.close();
    await sql.end({ timeout: 1 });
    await proxy.close();
    await redis.stop();
  });

  test('cached and serving-store codes keep redirecting (zero non-3xx); uncached codes fail fast', async () => {
    const result = await load(web.server.port, cached, 4_500, async () => {
      await sleep(1_000);
      await proxy.cut();
      const lruBefore = await metric(web.metrics, 'lru', 'hit');
      const storeHits = async () =>
        (await metric(web.metrics, 'serving_store', 'hit')) +
        (await metric(web.metrics, 'serving_store', 'late_hit'));
      const storeBefore = await storeHits();
      await sleep(2_000);
      assert.ok((await metric(web.metrics, 'lru', 'hit')) > lruBefore, 'LRU hits during the cut');
      assert.ok((await storeHits()) > storeBefore, 'store hits during the cut');
      // A code only Postgres knows cannot be answered: a 503, quickly, never a hang.
      const started = Date.now();
      const res = await fetch(`http://127.0.0.1:${web.server.port}/${postgresOnly[0]}`, {
        redirect: 'manual',
      });
      assert.equal(res.status, 503);
      assert.ok(Date.now() - started < 4_000, `${Date.now() - started} ms`);
    });
    process.stderr.write(
      `[outage postgres] ${result.total} requests, p99 ${result.p99LatencyMs} ms, max ${result.maxLatencyMs} ms, failures ${JSON.stringify([...result.failures])}\n`,
    );
    assert.deepEqual([...result.failures], []);
    // Real load even on a busy shared machine (a quiet one does several thousand).
    assert.ok(result.total > 300, `${result.total} requests`);

    // Postgres back: the uncached code redirects again.
    await proxy.restore();
    await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${web.server.port}/${postgresOnly[1]}`, {
        redirect: 'manual',
      });
      return res.status === 301 ? true : undefined;
    });
  });
});
