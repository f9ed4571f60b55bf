import type { LinkRow } from './link_rows.ts';
import { LINK_COLUMNS } from './link_store.ts';
import type { Sql } from './sql.ts';

/**
 * Runs `work` over every link that answers something other than "not found" (all but pending ones), in code
 * order, `batch` rows at a time, from one REPEATABLE READ, READ ONLY snapshot; `snapshotAt` is its time and
 * `longestCode` the length of the longest code in it.
 */
export async function withLinkSnapshot<T>(
  sql: Sql,
  batch: number,
  work: (snapshot: { snapshotAt: Date; longestCode: number; rows: AsyncIterable<LinkRow[]> }) => Promise<T>,
): Promise<T> {
  return (await sql.begin('isolation level repeatable read read only', async (tx) => {
    const [meta] = await tx<{ now: Date; longest: number }[]>`
      SELECT now() AS now, coalesce(max(length(code)), 1)::int AS longest FROM links WHERE status <> 'pending'`;
    const cursor = tx
      .unsafe<LinkRow[]>(`SELECT ${LINK_COLUMNS} FROM links WHERE status <> 'pending' ORDER BY code`)
      .cursor(batch);
    return work({ snapshotAt: meta!.now, longestCode: meta!.longest, rows: cursor });
  })) as T;
}
