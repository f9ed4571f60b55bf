import type { Db } from './sql.ts';

/** Resolves when Postgres answers a trivial query (the probes' "is the database reachable"). */
export async function pingDatabase(sql: Db): Promise<void> {
  await sql`SELECT 1`;
}
