import postgres from 'postgres';

type Types = { bigint: number };
/** The postgres.js pool. */
export type Sql = postgres.Sql<Types>;
/** What a store function queries through: the pool or an open transaction. */
export type Db = postgres.ISql<Types>;
/** A piece of a statement (a condition) built with the `db` tag, for another statement to embed. */
export type SqlFragment = postgres.PendingQuery<postgres.Row[]>;
/** An open transaction. */
export type Tx = postgres.TransactionSql<Types>;

/** `name` as a quoted SQL identifier (for names a statement cannot take as a parameter: tables, columns). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** SQLSTATE of a UNIQUE violation. */
export const UNIQUE_VIOLATION = '23505';

/** True when `error` is a Postgres UNIQUE violation (optionally on the named constraint). */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (!(error instanceof postgres.PostgresError) || error.code !== UNIQUE_VIOLATION) return false;
  return constraint === undefined || error.constraint_name === constraint;
}

export interface SqlOptions {
  url: string;
  max?: number;
  /** Embedded PGlite serves every socket from one session, so named statements would collide: false there. */
  prepare?: boolean;
  applicationName?: string;
}

/** Opens a postgres.js pool; int8 (COUNT, SUM, bigserial) comes back as a number: our counters stay < 2^53. */
export function createSql(options: SqlOptions): Sql {
  return postgres(options.url, {
    max: options.max ?? 10,
    prepare: options.prepare ?? true,
    // No idle_timeout: with one, postgres.js arms a timer each time a connection goes idle and clears it when the
    // next query takes it — a setTimeout and a clearTimeout per query (≈0.9 µs of each redirect answered from
    // Postgres, in the CPU profile). Idle connections stay open (at most `max`); TCP keep-alive (postgres.js's
    // keep_alive, 60 s) finds dead ones, and a failed connection is replaced on the next query.
    connect_timeout: 10,
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'lifeline' },
    types: {
      bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) },
    },
  });
}
