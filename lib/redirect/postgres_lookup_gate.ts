// The hot path's way to Postgres: a bounded number of statements in flight, the lookups that wait sent together.
import { Fifo } from '../shared/concurrency.ts';
import type { Tally } from '../shared/metrics.ts';
import { selectManyServingValues, selectServingValues } from '../stores/link_store.ts';
import type { Db } from '../stores/sql.ts';
import { TimeoutError } from './lookup_deadline.ts';
import type { ServingValues, ServingValuesWithCode } from './serving_record.ts';

/** A Postgres lookup (waiting for a slot included) that takes longer than this answers 503 instead. */
export const POSTGRES_LOOKUP_TIMEOUT_MS = 3_000;

/** A lookup waiting for a connection until `deadline` (epoch ms); answered or refused at its turn. */
interface Waiter {
  code: string;
  deadline: number;
  resolve: (rows: readonly ServingValues[]) => void;
  reject: (error: unknown) => void;
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
export function createLookupGate(limit: number, sql: Db, queries: LookupQueryTallies | undefined) {
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
        for (const row of found) byCode.set(row[12], row as unknown as ServingValues);
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

/** Statements sent, by shape (lifeline_link_lookup_queries_total): one code, or a batch. */
export interface LookupQueryTallies {
  single: Tally;
  batch: Tally;
}

/** The gate (createLookupGate): a free slot taken at once, or a place in the queue. */
export type LookupGate = ReturnType<typeof createLookupGate>;
