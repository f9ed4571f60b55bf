// The production resolver's ladder, composed: the LRU (resolver_cache.ts) → the serving store
// (serving_store_rung.ts) → Postgres (postgres_rung.ts, through postgres_lookup_gate.ts), each rung bounded by a
// deadline (lookup_deadline.ts); here they are wired together, with the single flight, stale-while-revalidate,
// refreshes and the bus.

import type { Logger } from '../shared/logger.ts';
import {
  type Metrics,
  registerLookupBreakerGauge,
  registerResolverCacheGauges,
  type Tally,
  tally,
} from '../shared/metrics.ts';
import { getLinksByCodes, getServingRowByCode } from '../stores/link_store.ts';
import type { Db } from '../stores/sql.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import type { InvalidationBus } from './invalidation_bus.ts';
import type { LinkResolver } from './link_resolver.ts';
import { createDeadline } from './lookup_deadline.ts';
import { lookupTallies } from './lookup_tallies.ts';
import { createLookupGate, POSTGRES_LOOKUP_TIMEOUT_MS } from './postgres_lookup_gate.ts';
import { createPostgresRung } from './postgres_rung.ts';
import { createRecordAdmission, createResolverCache, type Flight, NEVER } from './resolver_cache.ts';
import { toServingRecord } from './serving_record.ts';
import type { ServingStore } from './serving_store.ts';
import { createServingStoreRung } from './serving_store_rung.ts';

export { LOOKUP_BATCH_MAX, POSTGRES_LOOKUP_TIMEOUT_MS } from './postgres_lookup_gate.ts';
export { NEGATIVE_CACHE_MAX } from './resolver_cache.ts';

export interface LayeredResolverOptions {
  /** The pool lookups and refreshes read (the caller owns it). */
  sql: Db;
  metrics?: Metrics;
  logger?: Logger;
  /** The shared serving store; absent: LRU → Postgres. The resolver closes it. */
  store?: ServingStore;
  /** Where refreshes are announced and (with `subscribe`) heard; absent: this process only. Closed by us. */
  bus?: InvalidationBus;
  /** Listen on the bus (web instances); a worker that only announces changes leaves it off. */
  subscribe?: boolean;
  /** LRU entries (0: no LRU) and their TTL; TTL of "no such code" entries (0: none kept). */
  cacheMax: number;
  /** Estimated bytes the records' LRUs hold at most, all domains together (0 or absent: entries only). */
  cacheMaxBytes?: number;
  cacheTtlMs: number;
  negativeTtlMs: number;
  /**
   * How long past cacheTtlMs a servable-active record is still answered while one background refresh of it
   * runs (RESOLVER_STALE_MAX_MS; 0 or absent: never). docs/REDIRECTS.md, "Stale while revalidate".
   */
  staleMaxMs?: number;
  /** The clock (epoch ms) of the LRU's TTLs, the stale window and expiries; absent: the runtime's. */
  now?: () => number;
  /** A serving-store read slower than this falls through to Postgres. */
  storeTimeoutMs: number;
  /** Hot-path queries in flight at once: at most the pool size (DESIGN.md, "Known trap"). */
  postgresConcurrency: number;
  postgresTimeoutMs?: number;
  /**
   * The one target rule (lib/targets/target_rule.ts): a record from the serving store or Postgres whose target
   * or fallback breaks it never redirects. It is checked when a record enters the LRU, never on an LRU hit.
   * Absent: records are not checked (tests of the ladder alone).
   */
  targetPolicy?: CanonicalTargetPolicy;
}

/** The production resolver: bounded LRU → serving store → Postgres (DESIGN.md, "The redirect hot path"). */
export interface LayeredResolver extends LinkResolver {
  readonly store: ServingStore | undefined;
  /** Drops every in-process entry (after a missed-message window on the bus). */
  clear(): void;
  /** Entries in the LRUs now (records and "no such code" answers). */
  cachedEntries(): number;
  /** Estimated bytes of the records the LRUs hold now (0 when no byte bound is set). */
  cachedBytes(): number;
  /** Unsubscribes, then closes the bus and the store (not the pool). */
  close(): Promise<void>;
}

/** Builds the layered resolver; with `subscribe`, it starts listening on the bus at once. */
export function createLayeredResolver(options: LayeredResolverOptions): LayeredResolver {
  const { sql, metrics, logger, store, bus } = options;
  const postgresTimeoutMs = options.postgresTimeoutMs ?? POSTGRES_LOOKUP_TIMEOUT_MS;
  const counted = lookupTallies(metrics);
  const cache = createResolverCache(options, counted);
  if (metrics && options.subscribe && options.cacheMax > 0)
    registerResolverCacheGauges(metrics.registry, {
      bytes: cache.bytes,
      entries: cache.entries,
      maxBytes: options.cacheMaxBytes ?? 0,
    });
  const { peek, peekKey, flights, forget, drop, clear, enabled: lruOn, staleOn, staleRecord } = cache;
  const staleServed: Tally = metrics ? tally(metrics.resolverStaleServed, {}) : { n: 0 };
  const refreshed = {
    ok: metrics ? tally(metrics.resolverRefreshes, { result: 'ok' }) : { n: 0 },
    error: metrics ? tally(metrics.resolverRefreshes, { result: 'error' }) : { n: 0 },
    invalidated: metrics ? tally(metrics.resolverRefreshes, { result: 'invalidated' }) : { n: 0 },
  };
  const admit = createRecordAdmission(options.targetPolicy, counted, logger);
  const queries = metrics && {
    single: tally(metrics.lookupQueries, { shape: 'single' }),
    batch: tally(metrics.lookupQueries, { shape: 'batch' }),
  };
  const readPostgres = createPostgresRung({
    sql,
    gate: createLookupGate(Math.max(1, options.postgresConcurrency), sql, queries),
    deadline: createDeadline(postgresTimeoutMs, 'link lookup'),
    postgresTimeoutMs,
    queries,
    counted,
    admit,
    cache,
    logger,
  });
  // Below the LRU: the serving store, then Postgres. No store, so no late answer to wait for: Postgres's answer
  // (or its error) is the answer, landed in readPostgres's one reaction.
  const storeRung = store
    ? createServingStoreRung({
        store,
        storeTimeoutMs: options.storeTimeoutMs,
        metrics,
        counted,
        admit,
        cache,
        readPostgres,
      })
    : undefined;
  const lookup = storeRung ?? readPostgres;
  const storeBreaker = storeRung?.breaker;
  if (metrics && options.subscribe)
    registerLookupBreakerGauge(metrics.registry, () => ({
      postgres: readPostgres.breaker.open,
      serving_store: storeBreaker?.open,
    }));

  /**
   * Starts the one lookup of `code` below the LRU and puts it in flight; the lookup lands it (remember or
   * forget) in the same reaction that produces its answer, so no `then` is chained here. No named closure here
   * or anywhere per request: tsx compiles with esbuild's keepNames, which wraps each one in __name (an
   * Object.defineProperty per closure created: ~1 µs a request on the Postgres path).
   */
  function startLookup(code: string): Flight {
    const flight: Flight = { promise: NEVER, stale: false };
    flights.set(code, flight);
    try {
      flight.promise = lookup(code, flight);
    } catch (error) {
      forget(code, flight);
      throw error;
    }
    return flight;
  }

  /**
   * The background refresh of a record served stale: an ordinary lookup in flight (so it is the only one for
   * the code, and a request past the window joins it), whose answer replaces the record when it lands. A
   * failure leaves the stale record to be served, and refreshed again, until its window ends; an invalidation
   * meanwhile discards the answer (the flight is marked stale). One at a time per code, never one per request.
   */
  function revalidate(code: string): void {
    let flight: Flight;
    try {
      flight = startLookup(code);
    } catch {
      refreshed.error.n++;
      return;
    }
    flight.promise.then(
      () => {
        (flight.stale ? refreshed.invalidated : refreshed.ok).n++;
      },
      () => {
        (flight.stale ? refreshed.invalidated : refreshed.error).n++;
      },
    );
  }

  if (bus && options.subscribe) {
    bus.subscribe({
      onCode: (code) => drop(code),
      onResync: () => clear(),
    });
  }

  return {
    store,
    // The cache's own peek, not a wrapper: the Node fast path's LRU hit is this one call (answerPeeked).
    peek,
    peekerFor: cache.peekerFor,

    resolve(code) {
      const cached = peekKey(code);
      if (cached !== undefined) return Promise.resolve(cached);
      if (staleOn) {
        // Past its TTL, within the window, servable: answered at once while one refresh runs (not a miss).
        const stale = staleRecord(code);
        if (stale !== undefined) {
          staleServed.n++;
          if (!flights.has(code)) revalidate(code);
          return Promise.resolve(stale);
        }
      }
      if (lruOn) counted.lru.miss.n++;
      const inFlight = flights.get(code);
      if (inFlight) {
        counted.singleflight.shared.n++;
        return inFlight.promise;
      }
      return startLookup(code).promise;
    },

    async invalidate(code) {
      drop(code);
    },

    async refresh(code, db) {
      const row = await getServingRowByCode(db ?? sql, code);
      if (store) {
        if (row) await store.put(toServingRecord(row));
        else await store.delete(code);
      }
      drop(code);
      await bus?.publish(code, db);
    },

    async refreshMany(codes) {
      if (codes.length === 0) return;
      const rows = await getLinksByCodes(sql, codes);
      if (store) {
        // Issued together: the Redis client pipelines them (Upstash sends each; still concurrent).
        await Promise.all(
          codes.map((code) => {
            const row = rows.get(code);
            return row ? store.put(toServingRecord(row)) : store.delete(code);
          }),
        );
      }
      for (const code of codes) drop(code);
      if (bus?.publishMany) await bus.publishMany(codes);
      else if (bus) await Promise.all(codes.map((code) => bus.publish(code)));
    },

    clear,

    cachedEntries: cache.entries,
    cachedBytes: cache.bytes,

    hasLiveRecords: cache.hasLiveRecords,

    async close() {
      readPostgres.breaker.stop();
      storeBreaker?.stop();
      clear();
      await bus?.close();
      await store?.close();
    },
  };
}
