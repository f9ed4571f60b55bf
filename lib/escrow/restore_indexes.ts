// A restore into an empty database drops the secondary indexes and foreign keys of the tables it loads, commits
// the links, builds the links' indexes while the other tables load, and builds the rest after those commit
// (ADR 0093, ADR 0096). A note in settings says what is under way: written when the links commit, with
// `loading` set until the other tables have committed too, and removed once the last index is built. An
// interrupted restore is finished or undone by running `npm run restore` again instead of being left half-made.
import {
  addForeignKeys,
  buildIndex,
  emptyRestoredTables,
  listExistingIndexes,
  listMissingForeignKeys,
} from '../stores/escrow_store.ts';
import { deleteSetting, getSetting, upsertSetting } from '../stores/settings_store.ts';
import type { Db, Sql } from '../stores/sql.ts';

/** Settings key of the indexes a restore dropped and has not built again yet. */
export const RESTORE_PENDING_INDEXES_SETTING = 'restore_pending_indexes';

/** Index builds side by side unless told otherwise (`--index-jobs`). */
export const DEFAULT_INDEX_JOBS = 2;
export const MAX_INDEX_JOBS = 16;

export interface PendingIndexes {
  /** When the restore committed its first rows (ISO). */
  since: string;
  /** The export it loaded (its folder), for the operator. */
  source: string;
  indexes: { name: string; definition: string; table?: string }[];
  /** The foreign keys dropped for the load, added back when the last table has loaded. */
  foreignKeys?: { table: string; name: string; definition: string }[];
  /**
   * The links are committed and the other tables are not yet: a restore stopped now is undone (undoUnfinishedLoad),
   * never finished, since the export's other rows are not in the database.
   */
  loading?: boolean;
}

/** Records the note (in the transaction that commits the rows it speaks of). */
export async function recordPendingIndexes(db: Db, pending: PendingIndexes): Promise<void> {
  await upsertSetting(db, RESTORE_PENDING_INDEXES_SETTING, pending);
}

/** The note an earlier restore into this database left, or null. */
export async function readPendingIndexes(db: Db): Promise<PendingIndexes | null> {
  return getSetting<PendingIndexes>(db, RESTORE_PENDING_INDEXES_SETTING);
}

/**
 * The trigram (GIN) builds first, then the rest; within each, the index over the widest column first (`widths`, a
 * column's average bytes: a trigram build's time grows with the text it indexes, and the URL's is the longest of a
 * restore). Starting the longest first keeps every job busy to the end.
 */
export function longestFirst<T extends { definition: string }>(
  indexes: readonly T[],
  widths: ReadonlyMap<string, number> = new Map(),
): T[] {
  const gin = (index: T) => Number(/ USING gin /i.test(index.definition));
  const width = (index: T) => {
    const keys = index.definition.slice(index.definition.search(/ USING /i));
    let widest = 0;
    for (const [column, bytes] of widths) {
      if (bytes > widest && new RegExp(`\\b${column}\\b`).test(keys)) widest = bytes;
    }
    return widest;
  };
  return [...indexes].sort((a, b) => gin(b) - gin(a) || width(b) - width(a));
}

/**
 * Builds `indexes`, `jobs` at a time, longest first. `backends` names the server processes building at any moment
 * (cancelBackends stops them); once `signal` aborts, no other starts. After one fails the others finish the build they are in and stop; the first
 * failure is thrown. Returns how many were built.
 */
export async function buildIndexes(
  sql: Sql,
  indexes: readonly { name: string; definition: string }[],
  options: {
    jobs?: number;
    progress?: (line: string) => void;
    backends?: Set<number>;
    signal?: AbortSignal;
    /** Average column widths (longestFirst). */
    widths?: ReadonlyMap<string, number>;
  } = {},
): Promise<number> {
  const todo = longestFirst(indexes, options.widths);
  const jobs = Math.min(Math.max(1, Math.trunc(options.jobs ?? DEFAULT_INDEX_JOBS)), MAX_INDEX_JOBS);
  let next = 0;
  const worker = async () => {
    while (next < todo.length && !options.signal?.aborted) {
      const index = todo[next++]!;
      const at = Date.now();
      try {
        await buildIndex(sql, index.definition, options.backends);
      } catch (error) {
        next = todo.length;
        throw error;
      }
      options.progress?.(`index ${index.name} built in ${((Date.now() - at) / 1000).toFixed(1)} s`);
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(jobs, todo.length) }, worker));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return todo.length;
}

/**
 * Builds every pending index that does not exist yet and forgets the note once all exist; a failure leaves it
 * (the indexes built so far stay). Returns what was built, or null when nothing was pending or when the note is
 * of a load that did not finish (that is undone by the next restore, undoUnfinishedLoad).
 */
export async function finishPendingIndexes(
  sql: Sql,
  options: { jobs?: number; progress?: (line: string) => void } = {},
): Promise<{ built: number; durationMs: number; source: string } | null> {
  const pending = await readPendingIndexes(sql);
  if (pending === null || pending.loading) return null;
  const started = Date.now();
  const present = new Set(
    await listExistingIndexes(
      sql,
      pending.indexes.map((i) => i.name),
    ),
  );
  const built = await buildIndexes(
    sql,
    pending.indexes.filter((i) => !present.has(i.name)),
    options,
  );
  await deleteSetting(sql, RESTORE_PENDING_INDEXES_SETTING);
  return { built, durationMs: Date.now() - started, source: pending.source };
}

/**
 * Undoes a restore whose load did not finish (its links committed, its other tables not): in one transaction,
 * empties the restored tables, builds the dropped indexes again on the now empty tables, adds back the foreign
 * keys and forgets the note. The database is then as it was before that restore. Returns the note undone, or null
 * when there was none of an unfinished load.
 */
export async function undoUnfinishedLoad(sql: Sql): Promise<PendingIndexes | null> {
  return (await sql.begin(async (tx) => {
    const pending = await readPendingIndexes(tx);
    if (pending === null || !pending.loading) return null;
    await emptyRestoredTables(tx);
    const present = new Set(
      await listExistingIndexes(
        tx,
        pending.indexes.map((i) => i.name),
      ),
    );
    for (const index of pending.indexes) {
      if (!present.has(index.name)) await tx.unsafe(index.definition);
    }
    await addForeignKeys(tx, await listMissingForeignKeys(tx, pending.foreignKeys ?? []));
    await deleteSetting(tx, RESTORE_PENDING_INDEXES_SETTING);
    return pending;
  })) as PendingIndexes | null;
}
