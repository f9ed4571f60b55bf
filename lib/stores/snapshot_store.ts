import type { LinkRow } from './link_rows.ts';
import { LINK_COLUMNS } from './link_store.ts';
import type { Sql } from './sql.ts';

/**
 * Runs `work` over every link that answers something other than "not found" (all but pending ones), in code
 * order, `batch` rows at a time, from one REPEATABLE READ, READ ONLY snapshot; `snapshotAt` is its time.
 */
export async function withLinkSnapshot<T>(
  sql: Sql,
  batch: number,
  work: (snapshot: { snapshotAt: Date; rows: AsyncIterable<LinkRow[]> }) => Promise<T>,
): Promise<T> {
  return (await sql.begin('isolation level repeatable read read only', async (tx) => {
    const [meta] = await tx<{ now: Date }[]>`SELECT now() AS now`;
    const cursor = tx
      .unsafe<LinkRow[]>(`SELECT ${LINK_COLUMNS} FROM links WHERE status <> 'pending' ORDER BY code`)
      .cursor(batch);
    return work({ snapshotAt: meta!.now, rows: cursor });
  })) as T;
}
