import { LRUCache } from 'lru-cache';
import { Fifo } from '../shared/concurrency.ts';
import { UnavailableError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { type Metrics, type Tally, tally } from '../shared/metrics.ts';
import {
  getLinksByCodes,
  getServingRowByCode,
  selectManyServingValues,
  selectServingValues,
} from '../stores/link_store.ts';
import type { Db } from '../stores/sql.ts';
import {
  type CanonicalTargetPolicy as TargetPolicy,
  targetRuleProblem as targetPolicyProblem,
} from '../targets/target_rule.ts';
import type { InvalidationBus } from './invalidation_bus.ts';
import type { LinkResolver } from './link_resolver.ts';
import {
  isTamperedRecord,
  markTampered,
  type ServingRecord,
  type ServingValues,
  type ServingValuesWithCode,
  servingRecordFromValues,
  toServingRecord,
} from './serving_record.ts';
import type { ServingStore } from './serving_store.ts';

/** A Postgres lookup (waiting for a slot included) that takes longer than this answers 503 instead. */
export const POSTGRES_LOOKUP_TIMEOUT_MS = 3_000;
/** Consecutive serving-store failures after which reads skip the store for a while (a tripped breaker). */
const STORE_BREAKER_FAILURES = 5;
/** How long a tripped breaker skips the store before trying it again. */
const STORE_BREAKER_OPEN_MS = 1_000;
/** Serving-store reads pending at once, at most: a hung store must not pile up requests without bound. */
const STORE_MAX_IN_FLIGHT = 256;
/** With Postgres failing too, how long a slow serving-store read may still take. */
const LATE_STORE_WAIT_MS = 1_000;
/**
 * Consecutive Postgres failures after which lookups stop waiting on it for a while: postgres.js queues a
 * query for many seconds while it cannot connect, so an outage would otherwise hold every slot of the gate.
 */
const POSTGRES_BREAKER_FAILURES = 5;
const POSTGRES_BREAKER_OPEN_MS = 1_000;
/**
 * "No such code" answers kept at most, in their own LRU beside the records': a flood of unknown codes churns
 * this one and never evicts real links (each entry lives RESOLVER_NEGATIVE_TTL_MS anyway).
 */
export const NEGATIVE_CACHE_MAX = 10_000;
/** What a settled deadline entry holds instead of its promise's resolving functions. */
function settledAlready(): void {}

/**
 * A promise that never settles: a flight's placeholder until its lookup has started. Nothing may wait on it (a
 * reaction on it is never released: whatever it reaches stays alive for good).
 */
const NEVER = new Promise<never>(() => {});

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
  cacheTtlMs: number;
  negativeTtlMs: number;
  /** A serving-store read slower than this falls through to Postgres. */
  storeTimeoutMs: number;
  /** Hot-path queries in flight at once: at most the pool size (DESIGN.md, "Known trap"). */
  postgresConcurrency: number;
  postgresTimeoutMs?: number;
  /**
   * The one target rule (lib/safety/canonical_url.ts): a record from the serving store or Postgres whose target
   * or fallback breaks it never redirects. It is checked when a record enters the LRU, never on an LRU hit.
   * Absent: records are not checked (tests of the ladder alone).
   */
  targetPolicy?: TargetPolicy;
}

/** The production resolver: bounded LRU → serving store → Postgres (DESIGN.md, "The redirect hot path"). */
export interface LayeredResolver extends LinkResolver {
  readonly store: ServingStore | undefined;
  /** Drops every in-process entry (after a missed-message window on the bus). */
  clear(): void;
  /** Entries in the LRUs now (records and "no such code" answers). */
  cachedEntries(): number;
  /** Unsubscribes, then closes the bus and the store (not the pool). */
  close(): Promise<void>;
}

/** Every lookup result counted in lifeline_link_lookups_total, by layer. */
const LOOKUP_RESULTS = {
  lru: ['hit', 'negative', 'miss'],
  singleflight: ['shared'],
  serving_store: ['hit', 'miss', 'late_hit', 'error', 'skipped', 'tampered'],
  postgres: ['hit', 'miss', 'error', 'skipped', 'tampered'],
} as const;
type LookupTallies = {
  [L in keyof typeof LOOKUP_RESULTS]: Record<(typeof LOOKUP_RESULTS)[L][number], Tally>;
};

/** The resolver's counters, fetched once: a lookup adds to a tally (no label objects or keys per request). */
function lookupTallies(metrics: Metrics | undefined): LookupTallies {
  const out: Record<string, Record<string, Tally>> = {};
  for (const [layer, results] of Object.entries(LOOKUP_RESULTS)) {
    out[layer] = {};
    for (const result of results) {
      out[layer][result] = metrics ? tally(metrics.lookups, { layer, result }) : { n: 0 };
    }
  }
  return out as LookupTallies;
}

/** How stale the LRU's clock may be at most (see ttlResolution below). */
const LRU_TTL_RESOLUTION_MS = 1_000;

/** "No such code", cached for negativeTtlMs in the negative LRU. */
const NOT_FOUND = Object.freeze({ notFound: true as const });

/** One lookup in flight for a code; `stale` is set when the code changed meanwhile (do not cache its answer). */
interface Flight {
  promise: Promise<ServingRecord | null>;
  stale: boolean;
}

/**
 * What the serving store said when it gave no record: `record` undefined when it could not answer in time
 * (error, timeout, breaker open, no store), null for "no such code". A read that timed out is handed on as
 * `late`, still running, for use if Postgres fails too.
 */
interface StoreRead {
  record: null | undefined;
  late?: Promise<ServingRecord | null>;
  /** The store answered with a record that breaks the target rule: refused, to be replaced from Postgres. */
  refused?: boolean;
  read?: ServingRecord;
}
const NO_STORE: StoreRead = Object.freeze({ record: undefined });
const STORE_MISS: StoreRead = Object.freeze({ record: null });

class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} took longer than ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * A deadline of `ms` for any number of promises, kept by one timer: `within(p)` settles as `p` does, or rejects
 * with a TimeoutError `ms` after it was called. A setTimeout, a clearTimeout, a Promise.race and a finally per
 * lookup were a visible share of the serving-store path's CPU. Every deadline of one instance has the same
 * length, so they fall due in the order they were set: a list in that order, whose first entry the timer
 * waits for. An entry leaves the list the moment its promise settles, so the list holds only what is still
 * pending (about the lookups in flight), and nothing of a settled lookup outlives it: an array queue that kept
 * settled entries until the timer passed them (3 s on the Postgres path) made every lookup's entry outlive two
 * scavenges and be promoted, for the old generation's marker to trace.
 *
 * `onSettle` runs when `p` settles, in time or not. `onValue` and `onError` (the TimeoutError included) turn
 * the outcome into the returned promise's value, or throw its rejection: the caller's work runs in this one
 * reaction on `p` instead of a `then` chained after it (each reaction and promise on the Postgres path was
 * a measurable share of its CPU).
 */
function createDeadline(ms: number, what: string) {
  type Entry = {
    at: number;
    /** Settled (and so out of the list). */
    done: boolean;
    prev: Entry | undefined;
    next: Entry | undefined;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
    onValue: ((value: never) => unknown) | undefined;
    onError: ((error: unknown) => unknown) | undefined;
  };
  let first: Entry | undefined;
  let last: Entry | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (timer !== undefined || first === undefined) return;
    timer = setTimeout(expire, Math.max(0, first.at - performance.now()));
    // The promises it watches keep the process alive if anything does; the timer alone must not.
    timer.unref?.();
  };
  const finish = (entry: Entry, ok: boolean, outcome: unknown) => {
    const { resolve, reject, prev, next } = entry;
    const handle = ok ? entry.onValue : entry.onError;
    entry.done = true;
    if (prev === undefined) first = next;
    else prev.next = next;
    if (next === undefined) last = prev;
    else next.prev = prev;
    entry.prev = entry.next = undefined;
    // After a timeout the query still runs and its reactions hold the entry: they must not hold the caller.
    entry.resolve = entry.reject = settledAlready;
    entry.onValue = entry.onError = undefined;
    if (handle === undefined) {
      if (ok) resolve(outcome);
      else reject(outcome);
      return;
    }
    try {
      resolve(handle(outcome as never));
    } catch (error) {
      reject(error);
    }
  };
  const expire = () => {
    timer = undefined;
    const now = performance.now();
    while (first !== undefined && first.at <= now) finish(first, false, new TimeoutError(what, ms));
    arm();
  };
  function within<T>(promise: Promise<T>, onSettle?: () => void): Promise<T>;
  function within<T, R>(
    promise: Promise<T>,
    onSettle: (() => void) | undefined,
    onValue: (value: T) => R,
    onError: (error: unknown) => R,
  ): Promise<R>;
  function within<T, R>(
    promise: Promise<T>,
    onSettle?: () => void,
    onValue?: (value: T) => R,
    onError?: (error: unknown) => R,
  ): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const entry: Entry = {
        at: performance.now() + ms,
        done: false,
        prev: last,
        next: undefined,
        resolve: resolve as (value: unknown) => void,
        reject,
        onValue: onValue as ((value: never) => unknown) | undefined,
        onError,
      };
      if (last === undefined) first = entry;
      else last.next = entry;
      last = entry;
      arm();
      promise.then(
        (value) => {
          onSettle?.();
          if (!entry.done) finish(entry, true, value);
        },
        (error: unknown) => {
          onSettle?.();
          if (!entry.done) finish(entry, false, error);
        },
      );
    });
  }
  return within;
}

/** A lookup waiting for a connection until `deadline` (epoch ms); answered or refused at its turn. */
interface Waiter {
  code: string;
  deadline: number;
  resolve: (rows: readonly ServingValues[]) => void;
  reject: (error: unknown) => void;
}

/** The error every lookup that cannot reach Postgres answers with (a 503). */
function databaseUnavailable(): UnavailableError {
  return new UnavailableError('The link database is not answering; try again shortly.', 5);
}

/**
 * Lookups that queued for a connection are sent as one statement, this many at most (createLookupGate).
 * Measured with postgres.js on 100,000 codes, 10 connections and 50 callers: one statement per lookup cost ~40 µs
 * of Node CPU and ~35 µs of Postgres CPU per lookup; batches of up to 16–64 cost ~13 µs each (2.5× the lookups
 * a second). More than 32 gains nothing there and makes one statement's rows a larger allocation at once.
 */
export const LOOKUP_BATCH_MAX = 32;

/** No row: a code Postgres does not hold. */
const NO_ROWS: readonly ServingValues[] = Object.freeze([]);

/**
 * The hot path's way to Postgres: at most `limit` statements in flight (DESIGN.md, "Known trap"), and the
 * lookups that arrive while all are busy wait here, in arrival order, to be sent together (ADR 0055). A free
 * slot sends its lookup at once as the one-code statement (no lookup waits to be batched); when a statement
 * settles, its slot takes every waiter still in time off the queue (LOOKUP_BATCH_MAX at most) and sends them as
 * one `code = ANY(…)` statement (or the one-code statement, if only one waits). So under load the statements a
 * second stay about constant while the lookups a second grow: Postgres and postgres.js pay their per-statement
 * work (bind, plan, protocol round, promise) once per batch.
 *
 * A waiter whose deadline has passed when its turn comes is refused then and skipped (no scan of the queue; the
 * trap this guards against is exactly such a scan inside postgres.js). No timer per waiter: the caller's own
 * deadline (postgresDeadline) already stops it waiting.
 */
function createLookupGate(limit: number, sql: Db, queries: { single: Tally; batch: Tally } | undefined) {
  let active = 0;
  /** Waiters in arrival order; a served one is let go at once (see Fifo). */
  const queue = new Fifo<Waiter>();

  /** A slot's statement settled: it serves the next waiters, or is freed. */
  const release = () => {
    const now = Date.now();
    let first: Waiter | undefined;
    let batch: Waiter[] | undefined;
    while (batch === undefined || batch.length < LOOKUP_BATCH_MAX) {
      const waiter = queue.shift();
      if (waiter === undefined) break;
      if (waiter.deadline < now) {
        waiter.reject(new TimeoutError('waiting for a database connection', POSTGRES_LOOKUP_TIMEOUT_MS));
      } else if (first === undefined) first = waiter;
      else if (batch === undefined) batch = [first, waiter];
      else batch.push(waiter);
    }
    if (first === undefined) active--;
    else if (batch === undefined) sendOne(first);
    else sendMany(batch);
  };

  function sendOne(waiter: Waiter) {
    if (queries) queries.single.n++;
    let rows: Promise<readonly ServingValues[]>;
    try {
      rows = selectServingValues(sql, waiter.code);
    } catch (error) {
      rows = Promise.reject(error);
    }
    rows.then(
      (found) => {
        release();
        waiter.resolve(found);
      },
      (error: unknown) => {
        release();
        waiter.reject(error);
      },
    );
  }

  function sendMany(batch: Waiter[]) {
    if (queries) queries.batch.n++;
    let rows: Promise<ServingValuesWithCode[]>;
    try {
      rows = selectManyServingValues(
        sql,
        batch.map((waiter) => waiter.code),
      );
    } catch (error) {
      rows = Promise.reject(error);
    }
    rows.then(
      (found) => {
        release();
        const byCode = new Map<string, ServingValues>();
        for (const row of found) byCode.set(row[10], row as unknown as ServingValues);
        for (const waiter of batch) {
          const row = byCode.get(waiter.code);
          waiter.resolve(row === undefined ? NO_ROWS : [row]);
        }
      },
      (error: unknown) => {
        release();
        for (const waiter of batch) waiter.reject(error);
      },
    );
  }

  return {
    /**
     * Takes a free slot if there is one (true): the caller sends its one-code statement and calls `release` once
     * it has settled (in its one reaction on the query, see createDeadline). No slot is free while lookups wait.
     */
    tryTake(): boolean {
      if (active >= limit) return false;
      active++;
      return true;
    },
    release,
    /** `code`'s rows (none or one), once a slot takes it; refused if none does before `deadline` (epoch ms). */
    wait(code: string, deadline: number): Promise<readonly ServingValues[]> {
      return new Promise((resolve, reject) => {
        queue.push({ code, deadline, resolve, reject });
      });
    },
  };
}

/** Builds the layered resolver; with `subscribe`, it starts listening on the bus at once. */
export function createLayeredResolver(options: LayeredResolverOptions): LayeredResolver {
  const { sql, metrics, logger, store, bus } = options;
  const postgresTimeoutMs = options.postgresTimeoutMs ?? POSTGRES_LOOKUP_TIMEOUT_MS;
  const lru =
    options.cacheMax > 0
      ? new LRUCache<string, ServingRecord>({
          max: options.cacheMax,
          ttl: options.cacheTtlMs,
          // The clock read for staleness is reused for this long (default 1 ms: a clock read and a new timer
          // every millisecond under load); a record may so live up to this much past its TTL.
          ttlResolution: Math.min(LRU_TTL_RESOLUTION_MS, Math.max(1, Math.floor(options.cacheTtlMs / 100))),
        })
      : undefined;
  const negative =
    options.cacheMax > 0 && options.negativeTtlMs > 0
      ? new LRUCache<string, typeof NOT_FOUND>({
          max: Math.min(options.cacheMax, NEGATIVE_CACHE_MAX),
          ttl: options.negativeTtlMs,
        })
      : undefined;
  const policy = options.targetPolicy;
  const flights = new Map<string, Flight>();
  const queries = metrics && {
    single: tally(metrics.lookupQueries, { shape: 'single' }),
    batch: tally(metrics.lookupQueries, { shape: 'batch' }),
  };
  const gate = createLookupGate(Math.max(1, options.postgresConcurrency), sql, queries);
  let storeFailures = 0;
  let storeSkipUntil = 0;
  let storeInFlight = 0;
  const settled = () => {
    storeInFlight--;
  };
  let postgresFailures = 0;
  let postgresSkipUntil = 0;

  const counted = lookupTallies(metrics);
  const storeDeadline = createDeadline(options.storeTimeoutMs, 'serving store read');
  const lateStoreDeadline = createDeadline(LATE_STORE_WAIT_MS, 'late serving store read');
  const postgresDeadline = createDeadline(postgresTimeoutMs, 'link lookup');

  /**
   * A lookup landed with `record`: no longer in flight, and cached unless the code changed meanwhile (a stale
   * flight was already taken out of `flights` by drop or clear, and another may stand there now).
   */
  function remember(code: string, flight: Flight, record: ServingRecord | null) {
    if (flight.stale) return;
    flights.delete(code);
    if (record === null) negative?.set(code, NOT_FOUND);
    else lru?.set(code, record);
  }

  /** A lookup failed: no longer in flight (nothing cached). */
  function forget(code: string, flight: Flight) {
    if (!flight.stale) flights.delete(code);
  }

  /**
   * A record from `layer` as it may enter the LRU: itself when its target (and fallback) obey the target rule,
   * else undefined, counted and logged at error level with an `alert` field (a stored target that breaks the
   * rule was written around every way in, or the rule tightened since). Once per LRU fill, not per request.
   */
  function admit(record: ServingRecord, layer: 'serving_store' | 'postgres'): ServingRecord | undefined {
    if (!policy) return record;
    const problem =
      targetPolicyProblem(record.url, policy) ??
      (record.expiredUrl === null ? null : targetPolicyProblem(record.expiredUrl, policy));
    if (problem === null) return record;
    counted[layer].tampered.n++;
    logger?.error(
      { alert: 'tampered_target', code: record.code, layer, version: record.version, problem },
      'a stored link target breaks the target rule; the code answers 404 until it is fixed',
    );
    return undefined;
  }

  /**
   * Looks a code up: the serving store first, Postgres when the store has no clean answer. The store hit is
   * the common case and is answered with one reaction on the store's read (no async frames): each promise and
   * await on this path was a visible share of its CPU.
   */
  function lookup(code: string, flight: Flight): Promise<ServingRecord | null> {
    // No store, so no late answer to wait for: Postgres's answer (or its error) is the answer, landed in
    // readPostgres's one reaction.
    if (!store) return readPostgres(code, flight);
    const reading = storeSkipUntil > Date.now() ? undefined : startStoreRead(code);
    if (!reading) {
      counted.serving_store.skipped.n++;
      return lookupBeyondStore(code, flight, NO_STORE);
    }
    return storeDeadline(reading, settled).then(
      (read) => {
        storeFailures = 0;
        if (read === null) {
          counted.serving_store.miss.n++;
          return lookupBeyondStore(code, flight, STORE_MISS);
        }
        const record = admit(read, 'serving_store');
        if (record === undefined)
          return lookupBeyondStore(code, flight, { record: undefined, refused: true, read });
        counted.serving_store.hit.n++;
        remember(code, flight, record);
        return record;
      },
      (err: unknown) => {
        const timedOut = err instanceof TimeoutError;
        metrics?.servingStoreErrors.inc({ operation: timedOut ? 'get_timeout' : 'get' });
        counted.serving_store.error.n++;
        if (++storeFailures >= STORE_BREAKER_FAILURES) {
          storeSkipUntil = Date.now() + STORE_BREAKER_OPEN_MS;
          storeFailures = 0;
        }
        return lookupBeyondStore(code, flight, timedOut ? { record: undefined, late: reading } : NO_STORE);
      },
    );
  }

  /** A store read counted in flight (`settled` must run when it settles), unless too many are pending. */
  function startStoreRead(code: string): Promise<ServingRecord | null> | undefined {
    if (!store || storeInFlight >= STORE_MAX_IN_FLIGHT) return undefined;
    storeInFlight++;
    return store.get(code);
  }

  /** A store read, unless too many are pending already (then undefined). */
  function getFromStore(code: string): Promise<ServingRecord | null> | undefined {
    const reading = startStoreRead(code);
    reading?.then(settled, settled);
    return reading;
  }

  /** Postgres failed: waits a bounded time more for the store read still running beside it. */
  async function readStoreLate(late: Promise<ServingRecord | null>): Promise<ServingRecord | null> {
    try {
      const read = await lateStoreDeadline(late);
      if (read === null) return null;
      const record = admit(read, 'serving_store') ?? markTampered(read);
      if (record === read) counted.serving_store.late_hit.n++;
      return record;
    } catch {
      return null;
    }
  }

  /**
   * Reads Postgres (bounded by the gate and the deadline, behind its breaker). With `flight`, the lookup lands
   * here (remember or forget). Everything after the query — the slot's release, the row's record, the target
   * rule, the cache — runs in one reaction on postgres.js's promise: no async frame, no `then` chained after it.
   */
  function readPostgres(code: string, flight?: Flight): Promise<ServingRecord | null> {
    if (postgresSkipUntil > Date.now()) {
      counted.postgres.skipped.n++;
      if (flight) forget(code, flight);
      return Promise.reject(databaseUnavailable());
    }
    let rows: Promise<readonly ServingValues[]>;
    let release: (() => void) | undefined;
    if (gate.tryTake()) {
      if (queries) queries.single.n++;
      try {
        rows = selectServingValues(sql, code);
        release = gate.release;
      } catch (error) {
        gate.release();
        rows = Promise.reject(error);
      }
    } else rows = gate.wait(code, Date.now() + postgresTimeoutMs);
    return postgresDeadline(
      rows,
      release,
      (found) => {
        postgresFailures = 0;
        const row = found[0];
        let record: ServingRecord | null = null;
        if (row === undefined) counted.postgres.miss.n++;
        else {
          counted.postgres.hit.n++;
          const read = servingRecordFromValues(code, row);
          record = admit(read, 'postgres') ?? markTampered(read);
        }
        if (flight) remember(code, flight, record);
        return record;
      },
      (err) => {
        counted.postgres.error.n++;
        if (++postgresFailures >= POSTGRES_BREAKER_FAILURES) {
          postgresSkipUntil = Date.now() + POSTGRES_BREAKER_OPEN_MS;
          postgresFailures = 0;
          logger?.warn({ err }, 'link lookups: Postgres is failing; answering from caches only for a moment');
        }
        if (flight) forget(code, flight);
        throw databaseUnavailable();
      },
    );
  }

  /** The store gave no record (`stored` says why): Postgres, with the store's late answer as a fallback. */
  async function lookupBeyondStore(
    code: string,
    flight: Flight,
    stored: StoreRead,
  ): Promise<ServingRecord | null> {
    try {
      return await answerBeyondStore(code, flight, stored);
    } catch (error) {
      forget(code, flight);
      throw error;
    }
  }

  /** lookupBeyondStore's answer; every answer is remembered (which lands the flight), a failure thrown. */
  async function answerBeyondStore(
    code: string,
    flight: Flight,
    stored: StoreRead,
  ): Promise<ServingRecord | null> {
    // The store gave no clean answer (slow, failing, or skipped by its breaker): keep its read going (or start
    // one) beside Postgres. A record it returns before Postgres answers is as good an answer, and it is the
    // only answer when Postgres is down too.
    let storeRefused = stored.refused === true;
    const late =
      stored.record === undefined && !storeRefused ? (stored.late ?? getFromStore(code)) : undefined;
    late?.catch(() => {});
    const fromPostgres = readPostgres(code);
    let answer: { record: ServingRecord | null } | { error: unknown };
    if (late) {
      // Settles only with a record; otherwise stays pending, but as a promise of its own that nothing holds once
      // the read has ended. (Adopting a shared never-settling promise here added a reaction to it per slow
      // read that missed, keeping the race, and so this lookup's answer, reachable for good.)
      const lateRecord = new Promise<{ late: ServingRecord }>((resolve) => {
        late.then(
          (record) => {
            if (record) resolve({ late: record });
          },
          () => {},
        );
      });
      const first = await Promise.race([
        fromPostgres.then(
          (record) => ({ record }),
          (error: unknown) => ({ error }),
        ),
        lateRecord,
      ]);
      if ('late' in first) {
        const record = admit(first.late, 'serving_store');
        if (record !== undefined) {
          fromPostgres.catch(() => {});
          counted.serving_store.late_hit.n++;
          remember(code, flight, record);
          return record;
        }
        storeRefused = true;
        answer = await fromPostgres.then(
          (pgRecord) => ({ record: pgRecord }),
          (error: unknown) => ({ error }),
        );
        if ('error' in answer) {
          const standIn = markTampered(first.late);
          remember(code, flight, standIn);
          return standIn;
        }
      } else answer = first;
    } else {
      answer = await fromPostgres.then(
        (record) => ({ record }),
        (error: unknown) => ({ error }),
      );
    }
    if ('error' in answer) {
      // Postgres failed: unless the store said "no such code", a slow store answer beats a 503. A store record
      // that broke the rule is not an answer: the code answers 404 (its stand-in) rather than redirect there.
      if (stored.refused && stored.read) {
        const standIn = markTampered(stored.read);
        remember(code, flight, standIn);
        return standIn;
      }
      const lateAnswer = late ? await readStoreLate(late) : null;
      if (!lateAnswer) throw answer.error;
      remember(code, flight, lateAnswer);
      return lateAnswer;
    }
    const record = answer.record;
    remember(code, flight, record);
    // Refill the store in the background; only after a clean miss (a failing store is not given more work),
    // or in place of a record it held that broke the rule (deleted first: its version may be forged high).
    if (record && store && !isTamperedRecord(record)) {
      if (storeRefused) {
        store
          .delete(code)
          .then(() => store.put(record))
          .catch(() => metrics?.servingStoreErrors.inc({ operation: 'refill' }));
      } else if (stored.record === null) {
        store.put(record).catch(() => metrics?.servingStoreErrors.inc({ operation: 'refill' }));
      }
    }
    return record;
  }

  function drop(code: string) {
    lru?.delete(code);
    negative?.delete(code);
    const flight = flights.get(code);
    if (flight) {
      flight.stale = true;
      flights.delete(code);
    }
  }

  function clear() {
    lru?.clear();
    negative?.clear();
    for (const flight of flights.values()) flight.stale = true;
    flights.clear();
  }

  /** The LRU's answer, counted as a hit or negative hit; undefined when it has none (not counted). */
  function peek(code: string): ServingRecord | null | undefined {
    const cached = lru?.get(code);
    if (cached !== undefined) {
      counted.lru.hit.n++;
      return cached;
    }
    if (negative?.get(code) === undefined) return undefined;
    counted.lru.negative.n++;
    return null;
  }

  if (bus && options.subscribe) {
    bus.subscribe({
      onCode: (code) => drop(code),
      onResync: () => clear(),
    });
  }

  return {
    store,
    peek,

    resolve(code) {
      const cached = peek(code);
      if (cached !== undefined) return Promise.resolve(cached);
      if (lru) counted.lru.miss.n++;
      const inFlight = flights.get(code);
      if (inFlight) {
        counted.singleflight.shared.n++;
        return inFlight.promise;
      }
      const flight: Flight = { promise: NEVER, stale: false };
      // In flight from now; the lookup lands it (remember or forget) in the same reaction that produces its
      // answer, so no `then` is chained here. No named closure here or anywhere per request: tsx compiles with
      // esbuild's keepNames, which wraps each one in __name (an Object.defineProperty per closure created:
      // ~1 µs a request on the Postgres path).
      flights.set(code, flight);
      try {
        flight.promise = lookup(code, flight);
      } catch (error) {
        forget(code, flight);
        throw error;
      }
      return flight.promise;
    },

    async invalidate(code) {
      drop(code);
    },

    async refresh(code) {
      const row = await getServingRowByCode(sql, code);
      if (store) {
        if (row) await store.put(toServingRecord(row));
        else await store.delete(code);
      }
      drop(code);
      await bus?.publish(code);
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

    cachedEntries() {
      return (lru?.size ?? 0) + (negative?.size ?? 0);
    },

    hasLiveRecords() {
      // values() skips expired entries (most recently used first, so a warm cache answers at the first one);
      // "no such code" answers live in their own LRU, so any entry here is a record.
      if (lru) for (const _entry of lru.values()) return true;
      return false;
    },

    async close() {
      clear();
      await bus?.close();
      await store?.close();
    },
  };
}
