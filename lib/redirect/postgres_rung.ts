// The resolver's last rung: Postgres, through the gate, within the deadline, behind its breaker.
import { UnavailableError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { selectServingValues } from '../stores/link_store.ts';
import type { Db } from '../stores/sql.ts';
import type { Deadline } from './lookup_deadline.ts';
import type { LookupTallies } from './lookup_tallies.ts';
import type { LookupGate, LookupQueryTallies } from './postgres_lookup_gate.ts';
import type { Admit, Flight, ResolverCache } from './resolver_cache.ts';
import {
  markTampered,
  type ServingRecord,
  type ServingValues,
  servingRecordFromValues,
} from './serving_record.ts';

/**
 * Consecutive Postgres failures after which lookups stop waiting on it for a while: postgres.js queues a
 * query for many seconds while it cannot connect, so an outage would otherwise hold every slot of the gate.
 */
const POSTGRES_BREAKER_FAILURES = 5;
const POSTGRES_BREAKER_OPEN_MS = 1_000;

/** The error every lookup that cannot reach Postgres answers with (a 503). */
export function databaseUnavailable(): UnavailableError {
  return new UnavailableError('The link database is not answering; try again shortly.', 5);
}

export interface PostgresRungDeps {
  sql: Db;
  gate: LookupGate;
  /** The Postgres lookup deadline (createDeadline of postgresTimeoutMs). */
  deadline: Deadline;
  postgresTimeoutMs: number;
  queries: LookupQueryTallies | undefined;
  counted: LookupTallies;
  admit: Admit;
  cache: Pick<ResolverCache, 'remember' | 'forget'>;
  logger: Logger | undefined;
}

/**
 * `code`'s record from Postgres (null: no such code), or a 503; with `flight`, the lookup lands in the cache
 * here (remembered or forgotten).
 */
export type ReadPostgres = (code: string, flight?: Flight) => Promise<ServingRecord | null>;

/**
 * Decides what Postgres answers for a code, and when not to ask it: after POSTGRES_BREAKER_FAILURES failures in
 * a row, lookups answer 503 at once for POSTGRES_BREAKER_OPEN_MS instead of waiting on a database that is down.
 * A row whose target breaks the target rule answers as a tampered record (404), never as a redirect.
 */
export function createPostgresRung(deps: PostgresRungDeps): ReadPostgres {
  const { sql, gate, queries, counted, admit, logger, postgresTimeoutMs } = deps;
  const postgresDeadline = deps.deadline;
  const { remember, forget } = deps.cache;
  let postgresFailures = 0;
  let postgresSkipUntil = 0;

  /**
   * Reads Postgres (bounded by the gate and the deadline, behind its breaker). With `flight`, the lookup lands
   * here (remember or forget). Everything after the query — the slot's release, the row's record, the target
   * rule, the cache — runs in one reaction on postgres.js's promise: no async frame, no `then` chained after it.
   */
  return function readPostgres(code, flight) {
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
  };
}
