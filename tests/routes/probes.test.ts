// /livez and /readyz of the web tier over real HTTP (the Node fast path in front, as `npm run web` serves them),
// with real Postgres and Redis taken away under it: the readiness rule (lib/health/web_readiness.ts, ADR 0021)
// is "not draining, and Postgres, the serving store or live LRU records can answer a redirect".
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { eventually } from '../../devkit/harness/harness.ts';
import type { LayeredResolver } from '../../lib/redirect/layered_resolver.ts';
import { parseConfig } from '../../lib/shared/config.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createMetrics } from '../../lib/shared/metrics.ts';
import { insertLink } from '../../lib/stores/link_store.ts';
import { createSql, type Sql } from '../../lib/stores/sql.ts';
import {
  createUnavailableGateway,
  createUnavailableOpsGateway,
} from '../../lib/temporal/unavailable_gateways.ts';
import { createApp } from '../../routes/app.ts';
import type { WebDeps } from '../../routes/app_env.ts';
import { type RunningServer, serveNode } from '../../server/node_server.ts';
import { createWebDeps } from '../../server/web_deps.ts';
import { type PrivateRedis, startPrivateRedis } from '../helpers/private_redis.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp_proxy.ts';

let db: TestDatabase;
let pgProxy: TcpProxy;
let sql: Sql;
let postgresCut = false;

async function cutPostgres(): Promise<void> {
  await pgProxy.cut();
  postgresCut = true;
}

async function restorePostgres(): Promise<void> {
  if (!postgresCut) return;
  await pgProxy.restore();
  postgresCut = false;
}

before(async () => {
  db = await createTestDatabase();
  const url = new URL(db.url);
  pgProxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.port = String(pgProxy.port);
  // Through the proxy, so the test can take Postgres away (a cut proxy refuses connections at once).
  sql = createSql({ url: url.toString(), max: 4 });
  for (const code of ['probeA1', 'probeB1']) {
    await insertLink(db.sql, {
      code,
      targetUrl: `https://news.example/${code}`,
      status: 'active',
      origin: 'api',
      owner: 'test',
    });
  }
});
after(async () => {
  await sql?.end({ timeout: 1 });
  await pgProxy?.close();
  await db?.drop();
});

interface Web {
  base: string;
  deps: WebDeps;
  server: RunningServer;
  close(): Promise<void>;
}

async function startWeb(env: Record<string, string>, webSql: Sql = sql): Promise<Web> {
  const config = parseConfig({
    DATABASE_URL: db.url,
    LOG_LEVEL: 'silent',
    METRICS_TOKEN: 'probes-test-metrics-token',
    ...env,
  });
  const deps = await createWebDeps(config, {
    sql: webSql,
    logger: createLogger({ level: 'silent' }),
    metrics: createMetrics(),
    workflows: createUnavailableGateway('probe test'),
    ops: createUnavailableOpsGateway('probe test'),
  });
  const app = createApp(deps);
  const server = await serveNode(app.fetch, { port: 0, host: '127.0.0.1', fastPath: deps });
  return {
    base: `http://127.0.0.1:${server.port}`,
    deps,
    server,
    async close() {
      await server.close(500);
      await deps.close();
    },
  };
}

/**
 * Asks `path` until it answers `status` with `checks` (a probe's answer is cached for a second, so a change shows
 * within about that): the answer, and how long the change took to show from the first ask.
 */
async function awaitProbe(
  web: Web,
  path: string,
  status: number,
  checks: Record<string, unknown>,
): Promise<{ body: Record<string, unknown>; ms: number }> {
  const started = performance.now();
  const answer = await eventually(
    async () => {
      const r = await getJson(`${web.base}${path}`);
      return r.status === status && JSON.stringify(r.body.checks) === JSON.stringify(checks) ? r : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 20, what: `${path} answering ${status} ${JSON.stringify(checks)}` },
  );
  return { body: answer.body, ms: performance.now() - started };
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = performance.now();
  const response = await fetch(url);
  const body = (await response.json()) as Record<string, unknown>;
  assert.equal(response.headers.get('cache-control'), 'no-store');
  return { status: response.status, body, ms: performance.now() - started };
}

describe('web probes without a serving store', () => {
  let web: Web;
  before(async () => {
    web = await startWeb({});
  });
  after(async () => {
    await restorePostgres();
    await web?.close();
  });

  test('/livez answers; /readyz is ready with Postgres up and a cold cache', async () => {
    assert.deepEqual(await getJson(`${web.base}/livez`).then((r) => [r.status, r.body]), [
      200,
      { status: 'ok' },
    ]);
    const ready = await getJson(`${web.base}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, {
      status: 'ready',
      checks: { postgres: 'ok', servingStore: 'none', cache: 'cold' },
    });
    // Probes are not codes: the fast path hands them to Hono, and they are neither logged nor counted.
    const scraped = await fetch(`${web.base}/metrics`, {
      headers: { Authorization: 'Bearer probes-test-metrics-token' },
    });
    assert.equal(scraped.status, 200);
    const metrics = await scraped.text();
    assert.doesNotMatch(metrics, /route="\/(readyz|livez)"/);
  });

  test('Postgres down: ready while the LRU holds live records, unavailable once it holds none', async () => {
    const warm = await fetch(`${web.base}/probeA1`, { redirect: 'manual' });
    assert.equal(warm.status, 301);
    assert.deepEqual((await getJson(`${web.base}/readyz`)).body.checks, {
      postgres: 'ok',
      servingStore: 'none',
      cache: 'warm',
    });

    await cutPostgres();
    const degraded = await awaitProbe(web, '/readyz', 200, {
      postgres: 'down',
      servingStore: 'none',
      cache: 'warm',
    });
    assert.equal(degraded.body.status, 'ready');
    assert.ok(
      degraded.ms < 2_500,
      `the outage shows within about a second (took ${Math.round(degraded.ms)} ms)`,
    );
    // What readiness promises: the cached link still redirects.
    const cached = await fetch(`${web.base}/probeA1`, { redirect: 'manual' });
    assert.equal(cached.status, 301);

    (web.deps.resolver as LayeredResolver).clear();
    // The LRU is read on every ask (only the network checks are cached).
    const cold = await getJson(`${web.base}/readyz`);
    assert.equal(cold.status, 503);
    assert.deepEqual(cold.body, {
      status: 'unavailable',
      checks: { postgres: 'down', servingStore: 'none', cache: 'cold' },
    });
    assert.ok(cold.ms < 2_500, `a probe is bounded (took ${Math.round(cold.ms)} ms)`);
    assert.equal((await getJson(`${web.base}/livez`)).status, 200, 'alive all along');

    await restorePostgres();
    await eventually(async () => ((await getJson(`${web.base}/readyz`)).status === 200 ? true : undefined), {
      timeoutMs: 10_000,
      what: '/readyz back to 200 once Postgres answers',
    });
  });

  test('draining: /readyz answers 503 at once while redirects and /livez go on', async () => {
    web.deps.drain!.startDraining();
    const draining = await getJson(`${web.base}/readyz`);
    assert.deepEqual([draining.status, draining.body], [503, { status: 'draining' }]);
    assert.equal((await getJson(`${web.base}/livez`)).status, 200);
    const still = await fetch(`${web.base}/probeB1`, { redirect: 'manual' });
    assert.equal(still.status, 301);
  });
});

describe('web probes with a serving store and no LRU', () => {
  let redis: PrivateRedis;
  let web: Web;
  before(async () => {
    redis = await startPrivateRedis();
    web = await startWeb({ REDIS_URL: redis.url, RESOLVER_CACHE_MAX: '0' });
  });
  after(async () => {
    redis?.thaw();
    await restorePostgres();
    await web?.close();
    await redis?.stop();
  });

  test('Postgres down: ready while the serving store answers; unavailable when it hangs too', async () => {
    // The store's client connects as the process starts (on a busy machine, after the first probe may ask).
    const ready = { status: 'ready', checks: { postgres: 'ok', servingStore: 'ok', cache: 'off' } };
    await eventually(
      async () => {
        const body = (await getJson(`${web.base}/readyz`)).body;
        return JSON.stringify(body) === JSON.stringify(ready) ? body : undefined;
      },
      { what: '/readyz with both Postgres and the serving store answering' },
    );
    // The first lookup fills the store; with Postgres gone the store answers it.
    assert.equal((await fetch(`${web.base}/probeB1`, { redirect: 'manual' })).status, 301);
    await eventually(async () => (await web.deps.servingStore!.get('probeB1')) ?? undefined);

    await cutPostgres();
    const storeOnly = await awaitProbe(web, '/readyz', 200, {
      postgres: 'down',
      servingStore: 'ok',
      cache: 'off',
    });
    assert.equal(storeOnly.body.status, 'ready');
    assert.equal((await fetch(`${web.base}/probeB1`, { redirect: 'manual' })).status, 301);

    redis.freeze();
    const nothing = await awaitProbe(web, '/readyz', 503, {
      postgres: 'down',
      servingStore: 'down',
      cache: 'off',
    });
    assert.equal(nothing.body.status, 'unavailable');
    // The cached answer's second, then one check bounded by its own one-second timeout.
    assert.ok(nothing.ms < 3_500, `a hung store does not hang the probe (took ${Math.round(nothing.ms)} ms)`);
    redis.thaw();
    await restorePostgres();
  });
});

describe('probe answers are cached for a second', () => {
  let web: Web;
  let pings = 0;
  before(async () => {
    // The web tier's own pool, counting the probes' query as it goes to Postgres.
    const counting = new Proxy(sql, {
      apply(target, self, args: unknown[]) {
        if ((args[0] as readonly string[] | undefined)?.[0] === 'SELECT 1') pings++;
        return Reflect.apply(target, self, args);
      },
    });
    web = await startWeb({}, counting);
  });
  after(async () => {
    await restorePostgres();
    await web?.close();
  });

  test('many probes within a second make one query each; an outage shows within about a second', async () => {
    // The suite before this one cut and restored Postgres under the same pool: a probe may still see a connection
    // it lost (answered down, and cached for its second). Start from both probes answering ready.
    await eventually(
      async () => {
        const [ready, health] = await Promise.all([
          getJson(`${web.base}/readyz`),
          getJson(`${web.base}/healthz`),
        ]);
        return ready.status === 200 && health.status === 200 ? true : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'both probes ready before the burst' },
    );
    pings = 0;
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => getJson(`${web.base}/${i % 2 === 0 ? 'readyz' : 'healthz'}`)),
    );
    const seconds = Math.floor((performance.now() - started) / 1000) + 1;
    for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.body));
    // One query per probe route for each second the burst spanned (a fresh run of the checks each second).
    assert.ok(pings <= 2 * seconds, `${pings} queries for 60 probes over ${seconds} s`);

    await cutPostgres();
    const started2 = performance.now();
    await eventually(
      async () => {
        const [ready, health] = await Promise.all([
          getJson(`${web.base}/readyz`),
          getJson(`${web.base}/healthz`),
        ]);
        return ready.status === 503 && health.status === 503 && health.body.postgres === 'down'
          ? true
          : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 20, what: 'both probes seeing Postgres down' },
    );
    const ms = performance.now() - started2;
    assert.ok(ms < 2_500, `the outage shows within about a second (took ${Math.round(ms)} ms)`);
  });
});
