// Stale-while-revalidate on the short host (docs/REDIRECTS.md, "Stale while revalidate"): the real web app over
// HTTP (the Node fast path), real Postgres, a real Redis serving store and bus. Redis sits behind a proxy that
// counts the commands it is sent and can hold its replies (a refresh in flight for as long as a test needs);
// Postgres behind one that can cut it. The resolver's clock is the test's: TTLs and the window pass without
// sleeping.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { eventually } from '../../devkit/harness/harness.ts';
import { createConfiguredResolver } from '../../lib/redirect/create_resolver.ts';
import type { LayeredResolver } from '../../lib/redirect/layered_resolver.ts';
import { toServingRecord } from '../../lib/redirect/serving_record.ts';
import { servingKey } from '../../lib/redirect/serving_store.ts';
import { parseConfig } from '../../lib/shared/config.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createMetrics, type Metrics } from '../../lib/shared/metrics.ts';
import { insertLink, type NewLink, updateLink } from '../../lib/stores/link_store.ts';
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
import { type RedisCommandProxy, startRedisCommandProxy } from '../helpers/redis_command_proxy.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp_proxy.ts';

const TTL_MS = 60_000;
const STALE_MAX_MS = 30_000;
const NEGATIVE_TTL_MS = 5_000;
const PREFIX = `stale-test:${randomUUID()}:`;
const CONCURRENT = 1_000;

/** The resolver's clock: only the test moves it. */
let clockMs = Date.now();

let db: TestDatabase;
let redis: PrivateRedis;
let redisProxy: RedisCommandProxy;
let postgresProxy: TcpProxy;
let sql: Sql;
let metrics: Metrics;
let resolver: LayeredResolver;
let deps: WebDeps;
let server: RunningServer;
/** The worker's side: changes made elsewhere, straight to Postgres and Redis (not through the proxies). */
let writer: LayeredResolver;
let agent: Agent;

before(async () => {
  db = await createTestDatabase();
  redis = await startPrivateRedis();
  redisProxy = await startRedisCommandProxy({ host: '127.0.0.1', port: redis.port });
  postgresProxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(db.url).port || 5432) });
  const viaProxy = new URL(db.url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(postgresProxy.port);
  sql = createSql({ url: viaProxy.toString(), max: 4 });
  const config = parseConfig({
    DATABASE_URL: viaProxy.toString(),
    DATABASE_POOL_SIZE: '4',
    LOG_LEVEL: 'silent',
    REDIS_URL: redisProxy.url,
    REDIS_KEY_PREFIX: PREFIX,
    RESOLVER_CACHE_TTL_MS: String(TTL_MS),
    RESOLVER_STALE_MAX_MS: String(STALE_MAX_MS),
    RESOLVER_NEGATIVE_TTL_MS: String(NEGATIVE_TTL_MS),
    // A held refresh stays a serving-store read (it does not fall through to Postgres while a test holds it).
    SERVING_STORE_TIMEOUT_MS: '10000',
  });
  const logger = createLogger({ level: 'silent' });
  metrics = createMetrics();
  resolver = createConfiguredResolver(config, { sql, metrics, logger, role: 'web', now: () => clockMs });
  deps = await createWebDeps(config, {
    sql,
    logger,
    metrics,
    resolver,
    workflows: createUnavailableGateway('stale-while-revalidate test'),
    ops: createUnavailableOpsGateway('stale-while-revalidate test'),
  });
  const app = createApp(deps, { staticFiles: await loadStaticFiles() });
  server = await serveNode(app.fetch, { port: 0, host: '127.0.0.1', fastPath: deps });
  writer = createConfiguredResolver(
    parseConfig({ DATABASE_URL: db.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: PREFIX }),
    { sql: db.sql, role: 'worker' },
  );
  agent = new Agent({ keepAlive: true, maxSockets: 64 });
  // The web instance listens on the bus before anything is announced.
  const probe = createClient({ url: redis.url });
  await probe.connect();
  await eventually(async () => {
    const reply = (await probe.sendCommand(['PUBSUB', 'NUMSUB', `${PREFIX}links:changed`])) as [
      string,
      number,
    ];
    return Number(reply[1]) > 0 ? true : undefined;
  });
  await probe.close();
});

after(async () => {
  redisProxy?.release();
  agent?.destroy();
  await server?.close(1_000);
  await deps?.close();
  await resolver?.close();
  await writer?.close();
  await sql?.end({ timeout: 1 });
  await postgresProxy?.close();
  await redisProxy?.close();
  await redis?.stop();
  await db?.drop();
});

let n = 0;
/** A new link (active unless `link` says otherwise) with a target of its own. */
async function createLink(link: Partial<NewLink> = {}): Promise<string> {
  const code = `swr${Date.now().toString(36)}${n++}`;
  await insertLink(db.sql, {
    code,
    targetUrl: `https://news.example/${code}/v1`,
    status: 'active',
    origin: 'api',
    owner: 'test',
    ...link,
  });
  return code;
}

/**
 * The link changes in Postgres and the serving store, and this instance never hears of it (a lost bus message):
 * only its own lookups can find the change.
 */
async function changeUnannounced(code: string, changes: Parameters<typeof updateLink>[2]): Promise<void> {
  const row = await updateLink(db.sql, code, changes);
  assert.ok(row);
  assert.equal(await writer.store!.put(toServingRecord(row)), true);
}

/** GET /{code} over HTTP: the status and Location. */
function answer(code: string): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path: `/${code}`, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function locationOf(code: string): Promise<string | undefined> {
  const { status, location } = await answer(code);
  assert.equal(status, 301, `${code} redirects`);
  return location;
}

async function counter(name: 'resolverStaleServed' | 'resolverRefreshes' | 'lookups', labels = {}) {
  const { values } = await metrics[name].get();
  return values
    .filter((v) =>
      Object.entries(labels).every(([k, want]) => (v.labels as Record<string, unknown>)[k] === want),
    )
    .reduce((sum, v) => sum + v.value, 0);
}
const staleServed = () => counter('resolverStaleServed');
const refreshes = (result: string) => counter('resolverRefreshes', { result });
const lookups = (layer: string, result: string) => counter('lookups', { layer, result });
const storeReads = (code: string) => redisProxy.count('get', servingKey(PREFIX, code));

/** Moves the resolver's clock to `ms` past `from`. */
function clockAt(from: number, ms: number): void {
  clockMs = from + ms;
}

describe('stale while revalidate: a record past its TTL', () => {
  test(`is served stale to ${CONCURRENT.toLocaleString('en')} concurrent requests while exactly one refresh reads the store, then the refreshed record`, async () => {
    const code = await createLink();
    const filledAt = clockMs;
    assert.equal(await locationOf(code), `https://news.example/${code}/v1`);
    await changeUnannounced(code, { targetUrl: `https://news.example/${code}/v2` });
    assert.equal(await locationOf(code), `https://news.example/${code}/v1`, 'fresh: an LRU hit');

    clockAt(filledAt, TTL_MS + 1);
    const readsBefore = storeReads(code);
    const staleBefore = await staleServed();
    const postgresBefore = (await lookups('postgres', 'hit')) + (await lookups('postgres', 'miss'));
    redisProxy.hold();
    let answers: string[];
    try {
      answers = await Promise.all(
        Array.from({ length: CONCURRENT }, () => locationOf(code) as Promise<string>),
      );
      // The refresh's read reached Redis (counted) and waits for its reply: nothing else was read.
      assert.equal(storeReads(code) - readsBefore, 1, 'one serving-store read for all of them');
    } finally {
      redisProxy.release();
    }
    assert.deepEqual(
      new Set(answers),
      new Set([`https://news.example/${code}/v1`]),
      'every answer is the stale one',
    );
    assert.equal((await staleServed()) - staleBefore, CONCURRENT);

    await eventually(async () => ((await refreshes('ok')) >= 1 ? true : undefined), { what: 'the refresh' });
    assert.equal(await refreshes('ok'), 1);
    assert.equal(
      await locationOf(code),
      `https://news.example/${code}/v2`,
      'the refreshed record, fresh again',
    );
    assert.equal(storeReads(code) - readsBefore, 1, 'answered from the LRU');
    assert.equal((await staleServed()) - staleBefore, CONCURRENT);
    assert.equal(
      (await lookups('postgres', 'hit')) + (await lookups('postgres', 'miss')) - postgresBefore,
      0,
      'Postgres was never asked',
    );
  });

  test('is never served after an invalidation from the bus', async () => {
    const code = await createLink();
    const filledAt = clockMs;
    assert.equal(await locationOf(code), `https://news.example/${code}/v1`);
    const held = resolver.cachedEntries();
    clockAt(filledAt, TTL_MS + 1);
    await updateLink(db.sql, code, { targetUrl: `https://news.example/${code}/v2` });
    const staleBefore = await staleServed();
    await writer.refresh(code);
    await eventually(async () => (resolver.cachedEntries() === held - 1 ? true : undefined), {
      what: 'the bus message',
    });
    assert.equal(await locationOf(code), `https://news.example/${code}/v2`);
    assert.equal((await staleServed()) - staleBefore, 0);
  });

  test('an invalidation while its refresh runs: nothing stale after it, and the refresh’s answer is discarded', async () => {
    const code = await createLink();
    const filledAt = clockMs;
    assert.equal(await locationOf(code), `https://news.example/${code}/v1`);
    const held = resolver.cachedEntries();
    clockAt(filledAt, TTL_MS + 1);
    const staleBefore = await staleServed();
    const invalidatedBefore = await refreshes('invalidated');
    redisProxy.hold();
    try {
      assert.equal(await locationOf(code), `https://news.example/${code}/v1`, 'stale, the refresh held');
      // The change, announced (the bus's connection is never held): this instance drops the code.
      await updateLink(db.sql, code, { targetUrl: `https://news.example/${code}/v2` });
      await writer.refresh(code);
      await eventually(async () => (resolver.cachedEntries() === held - 1 ? true : undefined), {
        what: 'the bus message',
      });
    } finally {
      redisProxy.release();
    }
    // The held reply (read before the change: v1) lands on a flight the invalidation marked: not kept.
    await eventually(async () => ((await refreshes('invalidated')) > invalidatedBefore ? true : undefined), {
      what: 'the discarded refresh',
    });
    assert.equal(await locationOf(code), `https://news.example/${code}/v2`);
    assert.equal(await locationOf(code), `https://news.example/${code}/v2`);
    assert.equal((await staleServed()) - staleBefore, 1);
  });

  test('of a blocked, deleted, expired or since-expiring link is never served stale', async () => {
    const filledAt = clockMs;
    const cases = [
      { code: await createLink({ status: 'blocked' }), before: 451 },
      { code: await createLink({ safety: 'blocked' }), before: 451 },
      { code: await createLink({ status: 'gone' }), before: 410 },
      { code: await createLink({ status: 'expired' }), before: 410 },
      // Active when cached; its expires_at passes inside the stale window (the resolver's clock).
      {
        code: await createLink({ expiresAt: new Date(filledAt + TTL_MS + STALE_MAX_MS / 3) }),
        before: 301,
      },
    ];
    for (const { code, before } of cases) assert.equal((await answer(code)).status, before, code);
    // Each link is then restored elsewhere with a new target, and this instance is not told.
    for (const { code } of cases) {
      await changeUnannounced(code, {
        status: 'active',
        safety: 'clean',
        targetUrl: `https://news.example/${code}/v2`,
      });
    }
    clockAt(filledAt, TTL_MS + (STALE_MAX_MS * 2) / 3);
    const staleBefore = await staleServed();
    const missesBefore = await lookups('lru', 'miss');
    for (const { code } of cases) {
      assert.equal(await locationOf(code), `https://news.example/${code}/v2`, `${code}: looked up again`);
    }
    assert.equal((await staleServed()) - staleBefore, 0);
    assert.equal((await lookups('lru', 'miss')) - missesBefore, cases.length);
  });

  test('stops being served once its refresh finds the link deleted (also after the "no such code" entry expires)', async () => {
    const code = await createLink();
    const filledAt = clockMs;
    assert.equal(await locationOf(code), `https://news.example/${code}/v1`);
    await db.sql`DELETE FROM links WHERE code = ${code}`;
    await writer.store!.delete(code);
    clockAt(filledAt, TTL_MS + 1);
    const staleBefore = await staleServed();
    const okBefore = await refreshes('ok');
    // Nothing told this instance: it serves what it holds once, and its refresh finds nothing.
    assert.equal(await locationOf(code), `https://news.example/${code}/v1`);
    await eventually(async () => ((await refreshes('ok')) > okBefore ? true : undefined), {
      what: 'the refresh',
    });
    assert.equal((await answer(code)).status, 404);
    clockAt(filledAt, TTL_MS + 1 + NEGATIVE_TTL_MS + 1);
    assert.equal((await answer(code)).status, 404, 'still inside the old record’s window: not served');
    assert.equal((await staleServed()) - staleBefore, 1);
  });

  test('while its refreshes fail, is served until RESOLVER_STALE_MAX_MS past the TTL, then the miss path answers 503', async () => {
    const code = await createLink();
    const filledAt = clockMs;
    assert.equal(await locationOf(code), `https://news.example/${code}/v1`);
    clockAt(filledAt, TTL_MS + 1);
    const staleBefore = await staleServed();
    const errorsBefore = await refreshes('error');
    await redisProxy.cut();
    await postgresProxy.cut();
    try {
      assert.equal(await locationOf(code), `https://news.example/${code}/v1`);
      await eventually(async () => ((await refreshes('error')) > errorsBefore ? true : undefined), {
        what: 'the refresh to fail',
      });
      assert.equal(await locationOf(code), `https://news.example/${code}/v1`, 'after a failed refresh');
      clockAt(filledAt, TTL_MS + STALE_MAX_MS);
      assert.equal(await locationOf(code), `https://news.example/${code}/v1`, 'at the end of the window');
      assert.equal((await staleServed()) - staleBefore, 3);
      clockAt(filledAt, TTL_MS + STALE_MAX_MS + 1);
      assert.equal((await answer(code)).status, 503, 'past the window: the miss path, with no database');
      assert.equal((await staleServed()) - staleBefore, 3);
    } finally {
      await postgresProxy.restore();
      await redisProxy.restore();
    }
    await eventually(async () => ((await answer(code)).status === 301 ? true : undefined), {
      what: 'the link to redirect again',
    });
  });
});
