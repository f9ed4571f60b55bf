// Run by flights.test.ts in a child `node --expose-gc --import tsx`. Prints one JSON line: the bytes the young
// collections moved to the old generation while the resolver answered serving-store hits with the LRU off (every
// request a lookup in flight, as on the benchmark's serving-store path), per lookup.
//
// Environment: REDIS_URL (a real Redis), PROBE_KEY_PREFIX (a prefix of its own; the probe deletes its keys).
import { GCProfiler } from 'node:v8';
import { createLayeredResolver } from '../../../lib/redirect/layered_resolver.ts';
import { createRedisServingStore } from '../../../lib/redirect/redis_serving_store.ts';
import type { ServingRecord } from '../../../lib/redirect/serving_record.ts';
import type { Sql } from '../../../lib/stores/sql.ts';
import { activeRecord } from '../../helpers/serving_records.ts';

declare const gc: (options?: { type: 'minor' | 'major'; execution: 'sync' }) => void;

const CODES = 500;
/** Lookups in flight at once: wrk's 50 connections in the benchmark. */
const CONCURRENT = 50;
const ROUNDS = 400;

const store = createRedisServingStore({
  url: process.env.REDIS_URL!,
  keyPrefix: process.env.PROBE_KEY_PREFIX!,
});
const codes = Array.from({ length: CODES }, (_, i) => `fp${i}`);
for (let i = 0; i < 200 && (await store.get('probe').catch(() => undefined)) === undefined; i++)
  await new Promise((resolve) => setTimeout(resolve, 25));
for (const code of codes) {
  await store.put(activeRecord(code, `https://news.example.com/2026/12/05/a-story-${code}`));
}

const resolver = createLayeredResolver({
  // Every lookup is a serving-store hit: Postgres is never asked (a call would fail the probe).
  sql: (() => {
    throw new Error('the probe never reads Postgres');
  }) as unknown as Sql,
  store,
  cacheMax: 0,
  cacheTtlMs: 60_000,
  negativeTtlMs: 0,
  storeTimeoutMs: 5_000,
  postgresConcurrency: 1,
});

let next = 0;
async function round(): Promise<void> {
  const batch: Promise<ServingRecord | null>[] = [];
  for (let i = 0; i < CONCURRENT; i++) batch.push(resolver.resolve(codes[next++ % CODES]!));
  for (const record of await Promise.all(batch))
    if (record?.status !== 'active') throw new Error('a lookup was not a serving-store hit');
}

for (let i = 0; i < 40; i++) await round(); // warm up: compiled code, the store's connection, the tables' sizes
gc({ type: 'major', execution: 'sync' });
// Two young collections with nothing in between: what the resolver holds now is promoted, as a quiet moment does
// in a server. With the flights in a Map, its current table was one of them, and every later table hung off it.
gc({ type: 'minor', execution: 'sync' });
gc({ type: 'minor', execution: 'sync' });

const profiler = new GCProfiler();
profiler.start();
for (let i = 0; i < ROUNDS; i++) {
  await round();
  if (i % 4 === 3) gc({ type: 'minor', execution: 'sync' });
}
const stats = profiler.stop()?.statistics ?? [];
const oldUsed = (spaces: { spaceName: string; spaceUsedSize: number }[]) =>
  spaces.find((s) => s.spaceName === 'old_space')?.spaceUsedSize ?? 0;
let promoted = 0;
let minor = 0;
let major = 0;
for (const s of stats) {
  if (s.gcType === 'Scavenge') {
    minor++;
    promoted += oldUsed(s.afterGC.heapSpaceStatistics) - oldUsed(s.beforeGC.heapSpaceStatistics);
  } else if (s.gcType === 'MarkSweepCompact') major++;
}
const lookups = ROUNDS * CONCURRENT;
process.stdout.write(`${JSON.stringify({ lookups, minor, major, promotedPerLookup: promoted / lookups })}\n`);
for (const code of codes) await store.delete(code);
await resolver.close();
