// The resolver's last rung: Postgres, through the gate, within the deadline, behind its breaker.
import { type Breaker, createBreaker } from '../shared/breaker.ts';
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
 * Consecutive Postgres failures after which lookups stop waiting on it: postgres.js queues a query for many
 * seconds while it cannot connect, so an outage would otherwise hold every slot of the gate, and every lookup
 * would wait the whole deadline for its 503.
 */
const POSTGRES_BREAKER_FAILURES = 5;
/** The first probe's delay once open; doubled after each failed probe, up to the most. */
const POSTGRES_BREAKER_OPEN_MS = 1_000;
const POSTGRES_BREAKER_MAX_OPEN_MS = 5_000;
/** What the breaker's probe looks up: the lookup statement itself, for a code no link can have. */
const PROBE_CODE = '';

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
export type ReadPostgres = ((code: string, flight?: Flight) => Promise<ServingRecord | null>) & {
  /** Open while Postgres is failing: lookups answer 503 at once (lifeline_lookup_breaker_open). */
  readonly breaker: Breaker;
};

/**
 * Decides what Postgres answers for a code, and when not to ask it: after POSTGRES_BREAKER_FAILURES failures in
 * a row the breaker opens and lookups answer 503 at once, until its probe (the same statement, through the same
 * gate and deadline) is answered. A row whose target breaks the target rule answers as a tampered record (404),
 * never as a redirect.
 */
export function createPostgresRung(deps: PostgresRungDeps): ReadPostgres {
  const { sql, gate, queries, counted, admit, logger, postgresTimeoutMs } = deps;
  const postgresDeadline = deps.deadline;
  const { remember, forget } = deps.cache;

  /** The statement for `code` on a slot already taken, and the slot's release (none when it could not be sent). */
  function sendTaken(code: string): {
    rows: Promise<readonly ServingValues[]>;
    release: (() => void) | undefined;
  } {
    if (queries) queries.single.n++;
    try {
      return { rows: selectServingValues(sql, code), release: gate.release };
    } catch (error) {
      gate.release();
      return { rows: Promise.reject(error), release: undefined };
    }
  }

  /** The statement for `code` through the gate: a free slot at once (and its release), or a place in its queue. */
  function rowsOf(code: string): ReturnType<typeof sendTaken> {
    if (!gate.tryTake()) return { rows: gate.wait(code, Date.now() + postgresTimeoutMs), release: undefined };
    return sendTaken(code);
  }

  const breaker = createBreaker({
    failures: POSTGRES_BREAKER_FAILURES,
    openMs: POSTGRES_BREAKER_OPEN_MS,
    maxOpenMs: POSTGRES_BREAKER_MAX_OPEN_MS,
    // A free slot or nothing: while the breaker is open no new lookup takes a slot, so the slots still held are
    // statements sent before it opened that Postgres has not answered; probes queued behind them would pile up.
    probe() {
      if (!gate.tryTake())
        return Promise.reject(new Error('every lookup slot waits on an unanswered statement'));
      const { rows, release } = sendTaken(PROBE_CODE);
      return postgresDeadline(rows, release);
    },
    onOpen(err) {
      logger?.warn(
        { err },
        'link lookups: Postgres is failing; answering from caches only until it answers again',
      );
    },
    onClose() {
      logger?.info('link lookups: Postgres answers again');
    },
  });

  /**
   * Reads Postgres (bounded by the gate and the deadline, behind its breaker). With `flight`, the lookup lands
   * here (remember or forget). Everything after the query — the slot's release, the row's record, the target
   * rule, the cache — runs in one reaction on postgres.js's promise: no async frame, no `then` chained after it.
   */
  function readPostgres(code: string, flight?: Flight): Promise<ServingRecord | null> {
    if (breaker.open) {
      counted.postgres.skipped.n++;
      if (flight) forget(code, flight);
      return Promise.reject(databaseUnavailable());
    }
    const { rows, release } = rowsOf(code);
    return postgresDeadline(
      rows,
      release,
      (found) => {
        breaker.succeeded();
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
        breaker.failed(err);
        if (flight) forget(code, flight);
        throw databaseUnavailable();
      },
    );
  }
  return Object.assign(readPostgres, { breaker });
}
