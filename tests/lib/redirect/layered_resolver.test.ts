import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startUpstashFake } from '../../../devkit/fakes/upstash_fake.ts';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { eventually } from '../../../devkit/harness/harness.ts';
import {
  createLayeredResolver,
  type LayeredResolverOptions,
} from '../../../lib/redirect/layered_resolver.ts';
import { createRedisServingStore } from '../../../lib/redirect/redis_serving_store.ts';
import type { ServingStore } from '../../../lib/redirect/serving_store.ts';
import { createUpstashServingStore } from '../../../lib/redirect/upstash_serving_store.ts';
import { createMetrics, type Metrics } from '../../../lib/shared/metrics.ts';
import { insertLink, updateLink } from '../../../lib/stores/link_store.ts';
import { exposeGc } from '../../helpers/gc.ts';
import { type PrivateRedis, startPrivateRedis } from '../../helpers/private_redis.ts';

const REDIS_URL = process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let db: TestDatabase;
const closers: (() => Promise<void>)[] = [];
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  for (const close of closers.reverse()) await close();
  await db.drop();
});

let n = 0;
async function createCode(url = 'https://example.com/a'): Promise<string> {
  const code = `lr${Date.now().toString(36)}${n++}`;
  await insertLink(db.sql, { code, targetUrl: url, status: 'active', origin: 'api', owner: 'test' });
  return code;
}

async function count(metrics: Metrics, layer: string, result: string): Promise<number> {
  const { values } = await metrics.lookups.get();
  return values.find((v) => v.labels.layer === layer && v.labels.result === result)?.value ?? 0;
}

async function errors(metrics: Metrics, operation: string): Promise<number> {
  const { values } = await metrics.servingStoreErrors.get();
  return values.find((v) => v.labels.operation === operation)?.value ?? 0;
}

async function sharedStore(): Promise<ServingStore> {
  // A unique prefix per test file run: the shared Redis is never flushed, only our own keys are touched.
  const store = createRedisServingStore({ url: REDIS_URL, keyPrefix: `lltest:${randomUUID()}:` });
  closers.push(() => store.close());
  // Connected (until then reads fail fast and fall through, which other tests cover).
  await eventually(async () => ((await store.get('probe')) === null ? true : undefined));
  return store;
}

/** The Upstash fake (its own token) and a serving store on it under a fresh key prefix; both closed after. */
async function upstashStore() {
  const fake = await startUpstashFake({ redisUrl: REDIS_URL, token: `tok_${randomUUID()}` });
  closers.push(() => fake.stop());
  const store = createUpstashServingStore({
    url: fake.url,
    token: fake.token,
    keyPrefix: `lltest:${randomUUID()}:`,
  });
  return { fake, store };
}

function resolver(overrides: Partial<LayeredResolverOptions> = {}) {
  const metrics = createMetrics();
  const r = createLayeredResolver({
    sql: db.sql,
    metrics,
    cacheMax: 1000,
    cacheTtlMs: 60_000,
    negativeTtlMs: 5_000,
    // Generous: these tests are about behaviour, not timing (the timeout tests set their own).
    storeTimeoutMs: 1_000,
    postgresConcurrency: 4,
    ...overrides,
  });
  closers.push(async () => r.clear());
  return { r, metrics };
}

describe('layered resolver: LRU → serving store → Postgres', () => {
  test('an LRU hit reads nothing else; RESOLVER_CACHE_MAX=0 reads Postgres every time', async () => {
    const code = await createCode();
    const { r, metrics } = resolver();
    assert.equal((await r.resolve(code))?.url, 'https://example.com/a');
    assert.equal((await r.resolve(code))?.url, 'https://example.com/a');
    assert.equal(await count(metrics, 'postgres', 'hit'), 1);
    assert.equal(await count(metrics, 'lru', 'hit'), 1);

    const uncached = resolver({ cacheMax: 0 });
    await uncached.r.resolve(code);
    await uncached.r.resolve(code);
    assert.equal(await count(uncached.metrics, 'postgres', 'hit'), 2);
    assert.equal(uncached.r.cachedEntries(), 0);
  });

  test('the LRU is bounded by entries', async () => {
    const codes = await Promise.all(Array.from({ length: 30 }, () => createCode()));
    const { r } = resolver({ cacheMax: 10 });
    for (const code of codes) await r.resolve(code);
    assert.equal(r.cachedEntries(), 10);
  });

  test('singleflight: 1,000 concurrent misses for one code cost exactly one Postgres query', async () => {
    const code = await createCode('https://example.com/stampede');
    const { r, metrics } = resolver();
    const answers = await Promise.all(Array.from({ length: 1000 }, () => r.resolve(code)));
    assert.ok(answers.every((a) => a?.url === 'https://example.com/stampede'));
    assert.equal(await count(metrics, 'postgres', 'hit'), 1);
    assert.equal(await count(metrics, 'singleflight', 'shared'), 999);

    // Same with the LRU off (the serving-store path of the benchmark): still one query.
    const unknown = `nope${Date.now()}`;
    const cold = resolver({ cacheMax: 0, store: await sharedStore() });
    const misses = await Promise.all(Array.from({ length: 1000 }, () => cold.r.resolve(unknown)));
    assert.ok(misses.every((a) => a === null));
    assert.equal(await count(cold.metrics, 'postgres', 'miss'), 1);
  });

  test('unknown codes are cached negatively for a short time; refresh (after a create) clears that', async () => {
    const code = `neg${Date.now().toString(36)}`;
    const { r, metrics } = resolver({ negativeTtlMs: 60_000 });
    assert.equal(await r.resolve(code), null);
    await insertLink(db.sql, {
      code,
      targetUrl: 'https://example.com/new',
      status: 'active',
      origin: 'api',
      owner: 't',
    });
    assert.equal(await r.resolve(code), null, 'the negative entry still answers');
    assert.equal(await count(metrics, 'lru', 'negative'), 1);
    await r.refresh(code);
    assert.equal((await r.resolve(code))?.url, 'https://example.com/new');

    const short = resolver({ negativeTtlMs: 100 });
    const later = `neg2${Date.now().toString(36)}`;
    assert.equal(await short.r.resolve(later), null);
    await insertLink(db.sql, {
      code: later,
      targetUrl: 'https://e.com/x',
      status: 'active',
      origin: 'api',
      owner: 't',
    });
    await eventually(async () => ((await short.r.resolve(later)) ? true : undefined), { timeoutMs: 2_000 });
  });

  test('a Postgres hit refills the serving store in the background; a cold instance then reads the store', async () => {
    const code = await createCode('https://example.com/refill');
    const store = await sharedStore();
    const first = resolver({ store });
    await first.r.resolve(code);
    assert.equal(await count(first.metrics, 'serving_store', 'miss'), 1);
    await eventually(async () => ((await store.get(code)) ? true : undefined), { what: 'the refill' });

    const second = resolver({ store });
    assert.equal((await second.r.resolve(code))?.url, 'https://example.com/refill');
    assert.equal(await count(second.metrics, 'serving_store', 'hit'), 1);
    assert.equal(await count(second.metrics, 'postgres', 'hit'), 0);
  });

  test('refresh writes the new version through the store and drops the LRU entry', async () => {
    const code = await createCode('https://example.com/v1');
    const store = await sharedStore();
    const { r } = resolver({ store });
    assert.equal((await r.resolve(code))?.url, 'https://example.com/v1');
    await updateLink(db.sql, code, { targetUrl: 'https://example.com/v2' });
    assert.equal((await r.resolve(code))?.url, 'https://example.com/v1', 'cached until refreshed');
    await r.refresh(code);
    assert.equal((await store.get(code))?.url, 'https://example.com/v2');
    assert.equal((await r.resolve(code))?.url, 'https://example.com/v2');
    // A hard-deleted row leaves nothing behind in the store.
    await db.sql`DELETE FROM links WHERE code = ${code}`;
    await r.refresh(code);
    assert.equal(await store.get(code), null);
    assert.equal(await r.resolve(code), null);
  });

  test('a dead serving store falls through to Postgres at once, counted', async () => {
    const code = await createCode('https://example.com/dead-store');
    const dead = createRedisServingStore({ url: 'redis://127.0.0.1:1', keyPrefix: 'x:' });
    closers.push(() => dead.close());
    const { r, metrics } = resolver({ store: dead, cacheMax: 0, storeTimeoutMs: 50 });
    const started = Date.now();
    for (let i = 0; i < 3; i++) assert.equal((await r.resolve(code))?.url, 'https://example.com/dead-store');
    assert.ok(Date.now() - started < 2_000);
    assert.equal(await errors(metrics, 'get'), 3);
    assert.equal(await count(metrics, 'postgres', 'hit'), 3);
  });

  describe('a hung serving store (SIGSTOP)', () => {
    let redis: PrivateRedis;
    before(async () => {
      redis = await startPrivateRedis();
    });
    after(async () => {
      await redis.stop();
    });

    test('reads time out after SERVING_STORE_TIMEOUT_MS and fall through; the breaker then skips the store', async () => {
      const code = await createCode('https://example.com/hung');
      const store = createRedisServingStore({ url: redis.url, keyPrefix: 'hung:' });
      closers.push(() => store.close());
      const { r, metrics } = resolver({ store, cacheMax: 0, storeTimeoutMs: 50 });
      await eventually(async () => ((await r.resolve(code)) && (await store.get(code)) ? true : undefined));
      assert.equal(await count(metrics, 'serving_store', 'hit'), 0);
      assert.ok((await count(metrics, 'serving_store', 'miss')) >= 1);
      redis.freeze();
      try {
        for (let i = 0; i < 8; i++) {
          const started = Date.now();
          assert.equal((await r.resolve(code))?.url, 'https://example.com/hung');
          // Bounded (a frozen Redis never answers); generous for a loaded CI machine.
          assert.ok(Date.now() - started < 2_000, `lookup ${i} took ${Date.now() - started} ms`);
        }
        const timeouts = await errors(metrics, 'get_timeout');
        const skipped = await count(metrics, 'serving_store', 'skipped');
        // Five timeouts trip the breaker, which then skips the store for a second (a very slow machine may
        // see it close again and time out once more).
        assert.equal(timeouts, 5, `${timeouts} timeouts`);
        assert.equal(skipped, 3, `${skipped} skipped`);
        // Well past the old fixed second: the breaker's own probe times out, and no lookup waits on the store.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        for (let i = 0; i < 5; i++) assert.equal((await r.resolve(code))?.url, 'https://example.com/hung');
        assert.equal(await errors(metrics, 'get_timeout'), 5, 'no lookup timed out on the store again');
        assert.equal(await count(metrics, 'serving_store', 'skipped'), 8);
      } finally {
        redis.thaw();
      }
      // Thawed: a probe (at most 2 s apart) finds the store answering, and lookups read it again.
      await eventually(async () => {
        await r.resolve(code);
        return (await count(metrics, 'serving_store', 'hit')) > 0 ? true : undefined;
      });
    });
  });

  test('Upstash (REST) serving store: hits, then a hung and a failing REST endpoint fall through in time', async () => {
    const { fake, store } = await upstashStore();
    const code = await createCode('https://example.com/upstash');
    // Generous timeouts: a REST round trip on a loaded test machine can exceed the 50 ms default.
    const warm = resolver({ store, cacheMax: 0, storeTimeoutMs: 2_000 });
    await warm.r.resolve(code);
    await eventually(async () => ((await store.get(code)) ? true : undefined), { what: 'the refill' });
    const { r, metrics } = resolver({ store, cacheMax: 0, storeTimeoutMs: 250 });
    assert.equal((await r.resolve(code))?.url, 'https://example.com/upstash');
    assert.equal(await count(metrics, 'serving_store', 'hit'), 1);
    for (const mode of ['hang', 'fail'] as const) {
      fake.setMode(mode);
      const started = Date.now();
      assert.equal((await r.resolve(code))?.url, 'https://example.com/upstash', mode);
      assert.ok(Date.now() - started < 2_000, `${mode}: ${Date.now() - started} ms`);
    }
    fake.setMode('ok');
    assert.equal(await errors(metrics, 'get_timeout'), 1, 'the hung request timed out');
    assert.equal(await errors(metrics, 'get'), 1, 'the 500 failed');
    assert.equal(await count(metrics, 'postgres', 'hit'), 2);

    // Slow store AND Postgres not answering: the slow store answer is used rather than a 503.
    const both = resolver({ store, cacheMax: 0, storeTimeoutMs: 50, postgresTimeoutMs: 200 });
    fake.setDelayMs(400);
    const lock = await db.sql.reserve();
    try {
      await lock`BEGIN`;
      await lock`LOCK TABLE links IN ACCESS EXCLUSIVE MODE`;
      assert.equal((await both.r.resolve(code))?.url, 'https://example.com/upstash');
      assert.equal(await count(both.metrics, 'serving_store', 'late_hit'), 1);
      assert.equal(await count(both.metrics, 'postgres', 'error'), 1);
      // Unknown to the store as well: a 503, not a wrong 404.
      await assert.rejects(both.r.resolve('not-in-store'), (e: { status?: number }) => e.status === 503);
      await lock`COMMIT`;
    } finally {
      lock.release();
      fake.setDelayMs(0);
    }
  });

  test('in-flight Postgres lookups never exceed postgresConcurrency; a wait is bounded', async () => {
    const codes = await Promise.all(Array.from({ length: 40 }, () => createCode()));
    const { r } = resolver({ postgresConcurrency: 3, postgresTimeoutMs: 5_000 });
    // Hold the table so every lookup that reaches Postgres waits there, and count them from the server.
    const lock = await db.sql.reserve();
    try {
      await lock`BEGIN`;
      await lock`LOCK TABLE links IN ACCESS EXCLUSIVE MODE`;
      const all = Promise.all(codes.map((c) => r.resolve(c)));
      const waiting = async () => {
        const [row] = await db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM links WHERE code%'`;
        return row?.n ?? 0;
      };
      await eventually(async () => ((await waiting()) === 3 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(await waiting(), 3, 'still three: the other 37 wait in the gate, not in the pool');
      await lock`COMMIT`;
      assert.equal((await all).filter(Boolean).length, 40);
    } finally {
      lock.release();
    }

    const bounded = resolver({ postgresConcurrency: 1, postgresTimeoutMs: 300 });
    const holder = await db.sql.reserve();
    try {
      await holder`BEGIN`;
      await holder`LOCK TABLE links IN ACCESS EXCLUSIVE MODE`;
      const started = Date.now();
      const results = await Promise.allSettled([bounded.r.resolve(codes[0]!), bounded.r.resolve(codes[1]!)]);
      assert.ok(Date.now() - started < 1_500);
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assert.equal((result as PromiseRejectedResult).reason.status, 503);
      }
      await holder`COMMIT`;
    } finally {
      holder.release();
    }
  });

  test('lookups that queue for a connection are sent together (32 per statement at most), each answered with its own row', async () => {
    // Rows of every shape the serving record reads: plain, with UTM tags, expiring with a fallback, blocked.
    const codes: string[] = [];
    for (let i = 0; i < 38; i++) {
      const code = `lb${Date.now().toString(36)}${n++}`;
      await insertLink(db.sql, {
        code,
        targetUrl: `https://example.com/batch/${i}`,
        status: i % 7 === 3 ? 'blocked' : 'active',
        origin: 'api',
        owner: 'test',
        redirectStatus: i % 5 === 1 ? 302 : null,
        expiresAt: i % 4 === 2 ? new Date(Date.now() + 86_400_000 + i) : null,
        expiredUrl: i % 4 === 2 ? `https://example.com/expired/${i}` : null,
        utmCampaign: i % 3 === 0 ? `c${i}` : null,
        utmSource: i % 3 === 0 ? 'newsletter' : null,
      });
      codes.push(code);
    }
    const unknown = `nope${Date.now().toString(36)}`;
    const asked = [...codes.slice(0, 20), unknown, ...codes.slice(20)];
    // One connection, held by the table lock: the first lookup takes it, the other 38 queue in the gate.
    const { r, metrics } = resolver({ cacheMax: 0, postgresConcurrency: 1, postgresTimeoutMs: 10_000 });
    const lock = await db.sql.reserve();
    let answers: Awaited<ReturnType<typeof r.resolve>>[];
    try {
      await lock`BEGIN`;
      await lock`LOCK TABLE links IN ACCESS EXCLUSIVE MODE`;
      const all = Promise.all(asked.map((c) => r.resolve(c)));
      await eventually(async () => {
        const [row] = await db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM links WHERE code%'`;
        return row?.n === 1 ? true : undefined;
      });
      await lock`COMMIT`;
      answers = await all;
    } finally {
      lock.release();
    }
    const queries = async (shape: string) =>
      (await metrics.lookupQueries.get()).values.find((v) => v.labels.shape === shape)?.value ?? 0;
    assert.equal(await queries('single'), 1, 'the first lookup went alone');
    assert.equal(await queries('batch'), 2, 'the 38 that queued went as 32 + 6');
    assert.equal(await count(metrics, 'postgres', 'hit'), 38);
    assert.equal(await count(metrics, 'postgres', 'miss'), 1);

    // Each batched answer is the record a lookup of its own gives (a fresh resolver, free connections).
    const alone = resolver({ cacheMax: 0 });
    for (const [i, code] of asked.entries()) {
      assert.deepEqual(answers[i], await alone.r.resolve(code), code);
    }
    assert.equal(answers[20], null);
    assert.equal(answers[0]?.url, 'https://example.com/batch/0');
    assert.equal(await queries('batch'), 2);
    assert.equal(
      (await alone.metrics.lookupQueries.get()).values.find((v) => v.labels.shape === 'batch'),
      undefined,
    );
  });

  test('Postgres failing: after five failures no lookup waits on it until its probe is answered', async () => {
    const code = await createCode('https://example.com/breaker');
    const { r, metrics } = resolver({ cacheMax: 0, postgresTimeoutMs: 500, subscribe: true });
    const breakerOpen = async () =>
      (await metrics.registry.getSingleMetric('lifeline_lookup_breaker_open')?.get())?.values.find(
        (v) => v.labels.layer === 'postgres',
      )?.value;
    const lock = await db.sql.reserve();
    try {
      await lock`BEGIN`;
      await lock`LOCK TABLE links IN ACCESS EXCLUSIVE MODE`;
      for (let i = 0; i < 5; i++)
        await assert.rejects(r.resolve(code), (e: { status?: number }) => e.status === 503);
      assert.equal(await breakerOpen(), 1);
      // Well past the old fixed second, during which its probes fail too: every lookup is refused at once.
      // (The breaker this replaced let lookups through again after a second, and five of them waited 500 ms.)
      const until = Date.now() + 3_000;
      let slowest = 0;
      let refused = 0;
      while (Date.now() < until) {
        const started = Date.now();
        await assert.rejects(r.resolve(code), (e: { status?: number }) => e.status === 503);
        slowest = Math.max(slowest, Date.now() - started);
        refused++;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(slowest < 250, `no lookup waits on Postgres: the slowest took ${slowest} ms`);
      assert.equal(await count(metrics, 'postgres', 'error'), 5, 'no lookup reached Postgres');
      assert.equal(await count(metrics, 'postgres', 'skipped'), refused);
      await lock`COMMIT`;
    } finally {
      lock.release();
    }
    // The probe (at most 5 s apart, and its 500 ms deadline) finds Postgres answering and closes the breaker.
    await eventually(async () => ((await r.resolve(code).catch(() => null)) ? true : undefined), {
      timeoutMs: 8_000,
    });
    assert.equal(await breakerOpen(), 0);
    await r.close();
  });

  test('an invalidation during a lookup keeps its (possibly old) answer out of the LRU', async () => {
    const code = await createCode('https://example.com/race');
    const { r, metrics } = resolver();
    const lock = await db.sql.reserve();
    try {
      await lock`BEGIN`;
      await lock`LOCK TABLE links IN ACCESS EXCLUSIVE MODE`;
      const pending = r.resolve(code);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await r.invalidate(code);
      await lock`COMMIT`;
      await pending;
    } finally {
      lock.release();
    }
    await r.resolve(code);
    assert.equal(await count(metrics, 'postgres', 'hit'), 2, 'the second resolve had to read again');
  });

  test('an answered lookup is not kept alive by its pending deadline (no per-lookup garbage held for seconds)', async () => {
    // The Postgres deadline (3 s) keeps a queue entry per lookup until its timer passes it; the entry must not
    // hold the answer. Held, every Postgres answer at 10k req/s lived 3 s and was promoted to the old generation.
    const gc = exposeGc();
    const code = await createCode('https://example.com/held');
    const { r } = resolver({ cacheMax: 0 });
    let record = await r.resolve(code);
    assert.equal(record?.url, 'https://example.com/held');
    const held = new WeakRef(record as object);
    record = null;
    // Within the 3 s deadline: only the queue entry could still reach the record.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    assert.equal(held.deref(), undefined, 'the answered record was collected before its deadline fell due');
  });

  test('a slow serving-store read that ends in a miss keeps nothing of the lookup alive', async () => {
    // The store read timed out and kept running beside Postgres, which answered first; the read then found
    // nothing. Racing it must not tie the lookup to a promise that never settles: one shared never-settling
    // promise adopted per such read kept every one of those lookups' answers reachable for good (a leak that
    // grows with each store timeout, i.e. during any Redis slowdown).
    const gc = exposeGc();
    const { fake, store } = await upstashStore();
    const code = await createCode('https://example.com/late-miss');
    const { r, metrics } = resolver({ store, cacheMax: 0, storeTimeoutMs: 50 });
    fake.setDelayMs(300);
    let record = await r.resolve(code);
    assert.equal(record?.url, 'https://example.com/late-miss');
    assert.equal(await errors(metrics, 'get_timeout'), 1, 'the store read timed out');
    const held = new WeakRef(record as object);
    record = null;
    // The slow read ends (a miss) well within this wait.
    await new Promise((resolve) => setTimeout(resolve, 900));
    fake.setDelayMs(0);
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    assert.equal(held.deref(), undefined, 'the answer was collected once the late read had missed');
  });
});
