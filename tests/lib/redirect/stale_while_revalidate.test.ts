// The resolver's stale window on its own (real Postgres, no serving store): what is served stale and what is not,
// that 0 turns it off, and that the fresh LRU hit costs nothing more with it on. The web app, the serving store and
// the bus: tests/routes/redirect_stale.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { eventually } from '../../../devkit/harness/harness.ts';
import {
  createLayeredResolver,
  type LayeredResolverOptions,
} from '../../../lib/redirect/layered_resolver.ts';
import { lookupTallies } from '../../../lib/redirect/lookup_tallies.ts';
import {
  createResolverCache,
  type Flight,
  isServableActive,
  NEVER,
} from '../../../lib/redirect/resolver_cache.ts';
import type { ServingRecord } from '../../../lib/redirect/serving_record.ts';
import { createMetrics, type Metrics } from '../../../lib/shared/metrics.ts';
import { insertLink, updateLink } from '../../../lib/stores/link_store.ts';
import { exposeGc } from '../../helpers/gc.ts';
import { activeRecord } from '../../helpers/serving_records.ts';

const TTL_MS = 60_000;
const STALE_MAX_MS = 30_000;

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db.drop();
});

let clockMs = Date.now();
const RECORD: ServingRecord = activeRecord('x', 'https://news.example/x');
let n = 0;
async function createCode(): Promise<string> {
  const code = `swrl${Date.now().toString(36)}${n++}`;
  await insertLink(db.sql, {
    code,
    targetUrl: `https://news.example/${code}/v1`,
    status: 'active',
    origin: 'api',
    owner: 'test',
  });
  return code;
}

function resolver(overrides: Partial<LayeredResolverOptions> = {}) {
  const metrics = createMetrics();
  const r = createLayeredResolver({
    sql: db.sql,
    metrics,
    cacheMax: 1_000,
    cacheTtlMs: TTL_MS,
    negativeTtlMs: 5_000,
    staleMaxMs: STALE_MAX_MS,
    now: () => clockMs,
    storeTimeoutMs: 1_000,
    postgresConcurrency: 2,
    ...overrides,
  });
  return { r, metrics };
}

async function count(
  metrics: Metrics,
  name: 'resolverStaleServed' | 'resolverRefreshes' | 'lookups',
  labels = {},
): Promise<number> {
  const { values } = await metrics[name].get();
  return values
    .filter((v) =>
      Object.entries(labels).every(([k, want]) => (v.labels as Record<string, unknown>)[k] === want),
    )
    .reduce((sum, v) => sum + v.value, 0);
}

describe('the resolver’s stale window', () => {
  test('on: the stale record at once, then the refreshed one; RESOLVER_STALE_MAX_MS=0: a miss that waits, as before', async () => {
    const code = await createCode();
    const on = resolver();
    const off = resolver({ staleMaxMs: 0 });
    const filledAt = clockMs;
    for (const { r } of [on, off])
      assert.equal((await r.resolve(code))?.url, `https://news.example/${code}/v1`);
    await updateLink(db.sql, code, { targetUrl: `https://news.example/${code}/v2` });
    clockMs = filledAt + TTL_MS + 1;

    assert.equal((await on.r.resolve(code))?.url, `https://news.example/${code}/v1`);
    assert.equal(await count(on.metrics, 'resolverStaleServed'), 1);
    await eventually(async () =>
      on.r.peek?.(code)?.url === `https://news.example/${code}/v2` ? true : undefined,
    );
    assert.equal(await count(on.metrics, 'lookups', { layer: 'postgres', result: 'hit' }), 2);

    assert.equal((await off.r.resolve(code))?.url, `https://news.example/${code}/v2`);
    assert.equal(await count(off.metrics, 'resolverStaleServed'), 0);
    assert.equal(await count(off.metrics, 'lookups', { layer: 'lru', result: 'miss' }), 2);
  });

  test('without "no such code" entries, a refresh that finds the link deleted still ends the stale serving', async () => {
    const code = await createCode();
    const { r, metrics } = resolver({ negativeTtlMs: 0 });
    const filledAt = clockMs;
    assert.ok(await r.resolve(code));
    await db.sql`DELETE FROM links WHERE code = ${code}`;
    clockMs = filledAt + TTL_MS + 1;
    assert.ok(await r.resolve(code), 'served stale once: nothing told this resolver');
    await eventually(async () =>
      (await count(metrics, 'resolverRefreshes', { result: 'ok' })) === 1 ? true : undefined,
    );
    assert.equal(await r.resolve(code), null);
    assert.equal(await count(metrics, 'resolverStaleServed'), 1);
  });

  test('servable-active: active, not blocked, not past expires_at', () => {
    const record = RECORD;
    const now = 1_000_000;
    assert.equal(isServableActive(record, now), true);
    assert.equal(isServableActive({ ...record, safety: 'warn' }, now), true);
    assert.equal(isServableActive({ ...record, safety: 'unknown' }, now), true);
    assert.equal(isServableActive({ ...record, expiresAt: now + 1 }, now), true);
    assert.equal(isServableActive({ ...record, expiresAt: now }, now), false);
    assert.equal(isServableActive({ ...record, safety: 'blocked' }, now), false);
    for (const status of ['pending', 'gone', 'blocked', 'expired'] as const) {
      assert.equal(isServableActive({ ...record, status }, now), false, status);
    }
  });

  test('a fresh LRU hit allocates no more with the stale window on than off', (t) => {
    // The cache alone, on the runtime's clock as in production (an injected clock is read on every check).
    const peekOf = (staleMaxMs: number) => {
      const cache = createResolverCache(
        { cacheMax: 1_000, cacheTtlMs: 3_600_000, negativeTtlMs: 5_000, staleMaxMs },
        lookupTallies(undefined),
      );
      const flight: Flight = { promise: NEVER, stale: false };
      cache.flights.set('fresh', flight);
      cache.remember('fresh', flight, { ...RECORD, code: 'fresh' });
      return cache.peek;
    };
    const peekOn = peekOf(STALE_MAX_MS);
    const peekOff = peekOf(0);
    assert.equal(peekOn('fresh')?.code, 'fresh');
    const gc = exposeGc();
    const calls = 1_000_000;
    // Results go to a ring buffer, so the optimiser cannot drop an allocation as unused. Bytes allocated are the
    // growth of the heap plus what the collections during the loop freed.
    const sink: unknown[] = new Array(1024);
    const bytesPerCall = (fn: () => unknown) => {
      for (let i = 0; i < 10_000; i++) sink[i & 1023] = fn();
      // What earlier measurements left behind is collected first, not counted as this one's.
      gc();
      const profiler = new GCProfiler();
      profiler.start();
      const before = getHeapStatistics().used_heap_size;
      for (let i = 0; i < calls; i++) sink[i & 1023] = fn();
      const after = getHeapStatistics().used_heap_size;
      const freed = (profiler.stop()?.statistics ?? []).reduce(
        (sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize,
        0,
      );
      return (after - before + freed) / calls;
    };
    // Alternated, the least of three each: the JIT's inlining (lru-cache's get defaults an options object that
    // is only elided when inlined) changes from round to round for both alike, and is not the window's.
    let withWindow = Infinity;
    let without = Infinity;
    for (let round = 0; round < 3; round++) {
      without = Math.min(
        without,
        bytesPerCall(() => peekOff('fresh')),
      );
      withWindow = Math.min(
        withWindow,
        bytesPerCall(() => peekOn('fresh')),
      );
    }
    // The control shows the measure sees an allocation per call: a promise, as resolve() returns.
    const control = bytesPerCall(() => Promise.resolve(peekOn('fresh')));
    t.diagnostic(
      `bytes/call: peek ${withWindow.toFixed(2)} (window on), ${without.toFixed(2)} (off); with a promise ${control.toFixed(1)}`,
    );
    assert.ok(control > 16, `the control allocates (${control} bytes/call)`);
    // An object more per hit would be 16 bytes or more (a promise: the control's difference).
    assert.ok(
      withWindow < without + 8,
      `peek allocated ${withWindow} bytes/call with the window, ${without} without`,
    );
  });
});
