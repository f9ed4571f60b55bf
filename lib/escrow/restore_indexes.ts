// A restore into an empty database drops the secondary indexes of the tables it loads, commits the rows, and then
// builds the indexes side by side on separate connections (ADR 0093). Which indexes are still to build is kept in
// settings, written in the loading transaction and removed once the last one is built, so an interrupted restore
// is finished by running `npm run restore` again (or by finishPendingIndexes) instead of being left without them.
import { buildIndex, listExistingIndexes } from '../stores/escrow_store.ts';
import { deleteSetting, getSetting, upsertSetting } from '../stores/settings_store.ts';
import type { Db, Sql } from '../stores/sql.ts';

/** Settings key of the indexes a restore dropped and has not built again yet. */
export const RESTORE_PENDING_INDEXES_SETTING = 'restore_pending_indexes';

/** Index builds side by side unless told otherwise (`--index-jobs`). */
export const DEFAULT_INDEX_JOBS = 2;
export const MAX_INDEX_JOBS = 16;

export interface PendingIndexes {
  /** When the restore committed its rows (ISO). */
  since: string;
  /** The export it loaded (its folder), for the operator. */
  source: string;
  indexes: { name: string; definition: string }[];
}

/** Records the indexes still to build (inside the loading transaction: the rows and this note commit together). */
export async function recordPendingIndexes(db: Db, pending: PendingIndexes): Promise<void> {
  await upsertSetting(db, RESTORE_PENDING_INDEXES_SETTING, pending);
}

/** The indexes an earlier restore into this database left to build, or null. */
export async function readPendingIndexes(db: Db): Promise<PendingIndexes | null> {
  return getSetting<PendingIndexes>(db, RESTORE_PENDING_INDEXES_SETTING);
}

/**
 * Builds every pending index that does not exist yet, `jobs` at a time, the trigram (GIN) ones first: they take
 * longest, and starting them first keeps both cores busy until the end. Forgets the note once all exist; a
 * failure leaves it (the indexes built so far stay). Returns what was built, or null when nothing was pending.
 */
export async function finishPendingIndexes(
  sql: Sql,
  options: { jobs?: number; progress?: (line: string) => void } = {},
): Promise<{ built: number; durationMs: number; source: string } | null> {
  const pending = await readPendingIndexes(sql);
  if (pending === null) return null;
  const started = Date.now();
  const present = new Set(
    await listExistingIndexes(
      sql,
      pending.indexes.map((i) => i.name),
    ),
  );
  const todo = pending.indexes
    .filter((i) => !present.has(i.name))
    .sort((a, b) => Number(/ USING gin /i.test(b.definition)) - Number(/ USING gin /i.test(a.definition)));
  const jobs = Math.min(Math.max(1, Math.trunc(options.jobs ?? DEFAULT_INDEX_JOBS)), MAX_INDEX_JOBS);
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      const index = todo[next++]!;
      const at = Date.now();
      try {
        await buildIndex(sql, index.definition);
      } catch (error) {
        next = todo.length; // the other jobs finish the build they are in and stop
        throw error;
      }
      options.progress?.(`index ${index.name} built in ${((Date.now() - at) / 1000).toFixed(1)} s`);
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(jobs, todo.length) }, worker));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  await deleteSetting(sql, RESTORE_PENDING_INDEXES_SETTING);
  return { built: todo.length, durationMs: Date.now() - started, source: pending.source };
}
