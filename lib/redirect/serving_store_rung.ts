// The resolver's middle rung: the shared serving store, within its deadline, behind its breaker, with Postgres
// beside it when the store has no clean answer.
import { type Breaker, createBreaker } from '../shared/breaker.ts';
import type { Metrics } from '../shared/metrics.ts';
import { createDeadline, TimeoutError } from './lookup_deadline.ts';
import type { LookupTallies } from './lookup_tallies.ts';
import type { ReadPostgres } from './postgres_rung.ts';
import type { Admit, Flight, ResolverCache } from './resolver_cache.ts';
import { isTamperedRecord, markTampered, type ServingRecord } from './serving_record.ts';
import type { ServingStore } from './serving_store.ts';

/** Consecutive serving-store failures after which reads skip the store (an open breaker). */
const STORE_BREAKER_FAILURES = 5;
/**
 * How long an open breaker skips the store before its first probe; doubled after each failed probe, up to the
 * most. Short: while the store is skipped, every LRU miss is a Postgres statement.
 */
const STORE_BREAKER_OPEN_MS = 1_000;
const STORE_BREAKER_MAX_OPEN_MS = 2_000;
/** What the breaker's probe reads: a key no code has. */
const PROBE_CODE = '';
/** Serving-store reads pending at once, at most: a hung store must not pile up requests without bound. */
const STORE_MAX_IN_FLIGHT = 256;
/** With Postgres failing too, how long a slow serving-store read may still take. */
const LATE_STORE_WAIT_MS = 1_000;

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

export interface ServingStoreRungDeps {
  store: ServingStore;
  /** A serving-store read slower than this falls through to Postgres. */
  storeTimeoutMs: number;
  metrics: Metrics | undefined;
  counted: LookupTallies;
  admit: Admit;
  cache: Pick<ResolverCache, 'remember' | 'forget'>;
  /** The rung below (createPostgresRung). */
  readPostgres: ReadPostgres;
}

/** The rung's entry below the LRU, and its breaker (open while the store is skipped). */
export type ServingStoreLookup = ((code: string, flight: Flight) => Promise<ServingRecord | null>) & {
  readonly breaker: Breaker;
};

/**
 * Decides when the serving store's answer is the answer: a clean record in time is (and is cached); a miss, a
 * refused record, an error or a timeout goes to Postgres, with a slow read kept going beside it as the answer
 * when Postgres fails too. After STORE_BREAKER_FAILURES failures in a row the breaker opens and the store is
 * skipped until its probe (a read within the same deadline) is answered; a Postgres record refills the store in
 * the background. Returns the ladder's entry below the LRU: `lookup(code, flight)`, which lands the flight in
 * the cache.
 */
export function createServingStoreRung(deps: ServingStoreRungDeps): ServingStoreLookup {
  const { store, metrics, counted, admit, readPostgres } = deps;
  const { remember, forget } = deps.cache;
  let storeInFlight = 0;
  const settled = () => {
    storeInFlight--;
  };
  const storeDeadline = createDeadline(deps.storeTimeoutMs, 'serving store read');
  const breaker = createBreaker({
    failures: STORE_BREAKER_FAILURES,
    openMs: STORE_BREAKER_OPEN_MS,
    maxOpenMs: STORE_BREAKER_MAX_OPEN_MS,
    probe() {
      const reading = startStoreRead(PROBE_CODE);
      if (!reading) return Promise.reject(new Error('too many serving-store reads pending'));
      return storeDeadline(reading, settled);
    },
  });
  const lateStoreDeadline = createDeadline(LATE_STORE_WAIT_MS, 'late serving store read');

  /**
   * Looks a code up: the serving store first, Postgres when the store has no clean answer. The store hit is
   * the common case and is answered with one reaction on the store's read (no async frames): each promise and
   * await on this path was a visible share of its CPU.
   */
  function lookup(code: string, flight: Flight): Promise<ServingRecord | null> {
    const reading = breaker.open ? undefined : startStoreRead(code);
    if (!reading) {
      counted.serving_store.skipped.n++;
      return lookupBeyondStore(code, flight, NO_STORE);
    }
    return storeDeadline(reading, settled).then(
      (read) => {
        breaker.succeeded();
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
        breaker.failed(err);
        return lookupBeyondStore(code, flight, timedOut ? { record: undefined, late: reading } : NO_STORE);
      },
    );
  }

  /** A store read counted in flight (`settled` must run when it settles), unless too many are pending. */
  function startStoreRead(code: string): Promise<ServingRecord | null> | undefined {
    if (storeInFlight >= STORE_MAX_IN_FLIGHT) return undefined;
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
    if (record && !isTamperedRecord(record)) {
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

  return Object.assign(lookup, { breaker });
}
