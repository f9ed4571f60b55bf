// A restore into an empty database drops the secondary indexes and foreign keys of the tables it loads, commits
// the links, builds the links' indexes while the other tables load, and builds the rest after those commit
// (ADR 0093, ADR 0096). A note in settings says what is under way: written when the links commit, with
// `loading` set until the foreign keys are back (the load is whole), and removed once the last index is built. An
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

export interface IndexBuildOptions {
  jobs?: number;
  progress?: (line: string) => void;
  /** The server processes building at any moment (cancelBackends stops them). */
  backends?: Set<number>;
  /** Once it aborts, no other build starts. */
  signal?: AbortSignal;
  /** Average column widths (longestFirst). */
  widths?: ReadonlyMap<string, number>;
}

interface QueuedIndex {
  name: string;
  definition: string;
  built: () => void;
  failed: (error: unknown) => void;
}

/**
 * Index builds, `jobs` at a time, longest first (longestFirst), from a queue that can grow while it works: a
 * restore queues the links' indexes as soon as they commit and the other tables' once those do. After one build
 * fails (or `signal` aborts) no other starts, the running ones finish, and whatever was still queued fails too.
 */
export class IndexBuildQueue {
  private queue: QueuedIndex[] = [];
  private closed = false;
  private failure: unknown;
  private wakers: (() => void)[] = [];
  private readonly workers: Promise<void>[];
  private built = 0;

  constructor(
    private readonly sql: Sql,
    private readonly options: IndexBuildOptions = {},
  ) {
    const jobs = Math.min(Math.max(1, Math.trunc(options.jobs ?? DEFAULT_INDEX_JOBS)), MAX_INDEX_JOBS);
    options.signal?.addEventListener('abort', () => this.wake(), { once: true });
    this.workers = Array.from({ length: jobs }, () => this.work());
  }

  /** Queues `indexes`; resolves once every one of them is built, rejects if one cannot be. */
  add(indexes: readonly { name: string; definition: string }[]): Promise<void> {
    if (this.failure !== undefined || this.options.signal?.aborted) {
      return Promise.reject(this.failure ?? new Error('index builds stopped'));
    }
    const waits = indexes.map(
      (index) =>
        new Promise<void>((built, failed) => {
          this.queue.push({ name: index.name, definition: index.definition, built, failed });
        }),
    );
    for (const wait of waits) wait.catch(() => {}); // whoever awaits add() sees it
    this.queue = longestFirst(this.queue, this.options.widths);
    this.wake();
    return Promise.all(waits).then(() => undefined);
  }

  /** Nothing more will be queued: the jobs stop once the queue is empty. */
  close(): void {
    this.closed = true;
    this.wake();
  }

  /** Resolves with how many were built once the jobs have stopped (after close); throws the first failure. */
  async finished(): Promise<number> {
    await Promise.all(this.workers);
    if (this.failure !== undefined) throw this.failure;
    return this.built;
  }

  private wake(): void {
    for (const wake of this.wakers.splice(0)) wake();
  }

  private async work(): Promise<void> {
    for (;;) {
      if (this.failure !== undefined || this.options.signal?.aborted) {
        const reason = this.failure ?? new Error('index builds stopped');
        for (const left of this.queue.splice(0)) left.failed(reason);
        this.wake();
        return;
      }
      const index = this.queue.shift();
      if (index === undefined) {
        if (this.closed) return;
        await new Promise<void>((resolve) => {
          this.wakers.push(resolve);
        });
        continue;
      }
      const at = Date.now();
      try {
        await buildIndex(this.sql, index.definition, this.options.backends);
      } catch (error) {
        this.failure ??= error;
        index.failed(error);
        continue;
      }
      this.built++;
      this.options.progress?.(`index ${index.name} built in ${((Date.now() - at) / 1000).toFixed(1)} s`);
      index.built();
    }
  }
}

/** Builds `indexes` (IndexBuildQueue) and returns how many; throws the first failure once the others have stopped. */
export async function buildIndexes(
  sql: Sql,
  indexes: readonly { name: string; definition: string }[],
  options: IndexBuildOptions = {},
): Promise<number> {
  const queue = new IndexBuildQueue(sql, options);
  queue.add(indexes).catch(() => {}); // finished() throws the failure
  queue.close();
  return queue.finished();
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
