import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as delay } from 'node:timers/promises';
import { requestRescanAfterRestore } from '../safety/rescan_after_restore.ts';
import type { Logger } from '../shared/logger.ts';
import { type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import { openCopyIn } from '../stores/copy_in.ts';
import { type CopyColumn, copyTextRow } from '../stores/copy_text_rows.ts';
import {
  addForeignKeys,
  analyzeColumnWidths,
  analyzeTables,
  asRestoredLink,
  cancelBackends,
  countRestoreTargetRows,
  countSearchTextMismatches,
  createInsertedCodesTable,
  dropForeignKeys,
  dropIndexes,
  ESCROW_TABLES,
  insertEscrowRows,
  isEmbeddedPglite,
  listAppliedMigrations,
  listCopyColumns,
  listForeignKeys,
  listPlainIndexes,
  listSkippedCodes,
  listTableColumns,
  MOVED_ESCROW_COLUMNS,
  refoldSearchText,
  resetAuditSequence,
  resetWebhookEndpointSequence,
  searchFoldDigest,
  setSearchTextTrigger,
} from '../stores/escrow_store.ts';
import type { Sql, Tx } from '../stores/sql.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import { EscrowError, type EscrowFile, type EscrowManifest } from './escrow_manifest.ts';
import type { SignatureState } from './escrow_signature.ts';
import {
  finishPendingIndexes,
  IndexBuildQueue,
  type PendingIndexes,
  readPendingIndexes,
  recordPendingIndexes,
  undoUnfinishedLoad,
} from './restore_indexes.ts';
import {
  countRefusedRow,
  emptyRefusedRestoreRows,
  findRestoreRowProblem,
  type RefusedRestoreRows,
} from './restore_rows.ts';
import { type VerifiedEscrow, verifyEscrow } from './verify_escrow.ts';

/** Rows per INSERT: one JSON array parameter of up to this many lines (or BATCH_MAX_BYTES). */
const BATCH_MAX_ROWS = 5_000;
const BATCH_MAX_BYTES = 8 << 20;
/** Codes a merge-restore names as skipped (the count is exact). */
const SKIPPED_EXAMPLES = 20;
/** Links whose exported search text is folded again and compared, when it is taken as exported. */
const SEARCH_TEXT_SAMPLE = 10_000;

export interface RestoreEscrowOptions {
  dir: string;
  /**
   * Restore into a database that already has links: only codes it does not have are added; every existing
   * row (a deleted code above all) is left exactly as it is. Without it such a database is refused.
   */
  force?: boolean;
  context?: TaskContext;
  /** Who restores (the audit entry). */
  actor?: string;
  /** ESCROW_SIGNING_KEY: the manifest's signature must match it (escrow_signature.ts). */
  signingKey?: string | undefined;
  /** Restore an export without a signature although `signingKey` is set (--allow-unsigned). */
  allowUnsigned?: boolean;
  /** Told each step as it ends (a table loaded, an index built): a large restore takes minutes. */
  progress?: (line: string) => void;
  /** Index builds side by side after the rows are committed (default 2; restore_indexes.ts). */
  indexJobs?: number;
  /**
   * What verifyEscrow said of `dir` just before, with the same signing options (the CLI checks before it opens the
   * database): reading every file's SHA-256 again would add a minute per 15 GB.
   */
  verified?: VerifiedEscrow;
}

export interface RestoreSummary {
  mode: 'empty' | 'merge';
  manifest: EscrowManifest;
  tables: Record<string, { inExport: number; inserted: number; ms: number }>;
  /** The secondary indexes built again after the load (an empty database only), and how long that took. */
  indexes: { built: number; ms: number };
  /** Links of the export whose codes the database already had (merge only): left unchanged. */
  skippedLinks: number;
  skippedExamples: string[];
  /** Rows left out because they break an intake rule (restore_rows.ts), by table and rule. */
  refused: RefusedRestoreRows;
  /**
   * Where the links' search text came from: `exported` (same folding, a sample checked), `refolded` (same
   * folding claimed but the sample disagreed: every row folded again after the load), or `folded` (folded row by
   * row as it was loaded: a merge, an export without the digest, or a database that folds differently).
   */
  searchText: { source: 'exported' | 'refolded' | 'folded'; sampled: number; mismatched: number };
  signature: SignatureState;
  durationMs: number;
}

/**
 * Loads an escrow export into a database after checking it against its manifest (sizes, SHA-256, lines),
 * its schema against the database's migrations and its columns against the tables. Into an empty database
 * (no links, vendor mappings, reports, audit entries or clicks), everything is loaded as exported, ids and
 * timestamps included, and the counts must equal the manifest's; with `force`, into a database that has
 * links, only links whose codes (and posts) are free are added, with their vendor mappings, reports, audit
 * entries (new ids) and clicks: a restore never changes a code that exists, so a deleted code stays deleted.
 * Every row is checked with the intake rules first (restore_rows.ts: code rule, target rule under `targetPolicy`,
 * vendor id shape); a row that breaks one is left out and counted. No row vouches for its link's safety: `clean`
 * is loaded as `unknown`, every link is due a re-scan, and one is requested (lib/safety/rescan_after_restore.ts).
 * Into an empty database (ADR 0096) the secondary indexes and foreign keys are dropped and the links load by COPY
 * and commit first, with a note in settings that the load is under way. Their indexes build on other connections
 * while a second transaction loads the other tables. Those tables' indexes join the builds once they commit. When
 * the links' indexes exist, a third transaction adds the keys back (each row checked), writes the audit entry and
 * marks the load whole (restore_indexes.ts). If anything fails before that, the restored tables are emptied and the
 * indexes and keys put back, so the database is as it was. A restore killed while loading is undone the same way by
 * the next one; one stopped while building indexes is finished by finishPendingIndexes (`npm run restore` runs it
 * first). A merge loads in one transaction and keeps its indexes.
 */
export async function restoreEscrow(
  deps: { sql: Sql; logger?: Logger; targetPolicy: CanonicalTargetPolicy },
  options: RestoreEscrowOptions,
): Promise<RestoreSummary> {
  // One restore at a time: a second one would take the first's unfinished load for a killed one and undo it. The
  // lock is the session's, on a connection kept for it (the pool needs one more than the restore's own work).
  const lock = await deps.sql.reserve();
  try {
    // The restore's advisory lock key (the bootstrap's is …965, the stored-target review's …966).
    const [held] = await lock<{ ok: boolean }[]>`SELECT pg_try_advisory_lock(7241865325823967) AS ok`;
    if (!held!.ok) {
      throw new EscrowError(
        'another restore into this database is running; wait for it to end, then try again',
      );
    }
    try {
      return await restoreLocked(deps, options);
    } finally {
      await lock`SELECT pg_advisory_unlock(7241865325823967)`.catch(() => {});
    }
  } finally {
    lock.release();
  }
}

async function restoreLocked(
  deps: { sql: Sql; logger?: Logger; targetPolicy: CanonicalTargetPolicy },
  options: RestoreEscrowOptions,
): Promise<RestoreSummary> {
  const started = Date.now();
  const { manifest, signature } =
    options.verified ??
    (await verifyEscrow(options.dir, {
      signingKey: options.signingKey,
      allowUnsigned: options.allowUnsigned ?? false,
    }));
  const applied = await listAppliedMigrations(deps.sql).catch((error: unknown) => {
    throw new EscrowError(
      `the database has no Lifeline schema (${(error as Error).message}); run \`npm run migrate\` first`,
    );
  });
  if (manifest.schema.lastMigration && !applied.includes(manifest.schema.lastMigration)) {
    throw new EscrowError(
      `the export was made by a newer Lifeline (its schema ends at ${manifest.schema.lastMigration}, this ` +
        `database at ${applied.at(-1) ?? 'nothing'}); upgrade Lifeline and migrate, then restore`,
    );
  }
  const columnsByTable = new Map<string, string[]>();
  for (const file of manifest.files) {
    const present = new Set(await listTableColumns(deps.sql, file.table));
    // A column a later migration moved to another table (an older export): loaded there, not here.
    const moved = MOVED_ESCROW_COLUMNS[file.table] ?? {};
    const kept = file.columns.filter((c) => moved[c] === undefined);
    const unknown = kept.filter((c) => !present.has(c));
    if (unknown.length > 0) {
      throw new EscrowError(`${file.name} has columns this database lacks: ${unknown.join(', ')}`);
    }
    columnsByTable.set(file.table, kept);
  }
  // A restore that stopped before its other tables committed is undone first: its links alone are no database.
  const undone = await undoUnfinishedLoad(deps.sql);
  if (undone !== null) {
    options.progress?.(
      `an earlier restore (of ${undone.source}, begun ${undone.since}) stopped before its last table loaded: ` +
        'its rows were removed and its indexes and keys put back',
    );
    deps.logger?.warn({ source: undone.source, since: undone.since }, 'an unfinished restore was undone');
  }
  const unfinished = await readPendingIndexes(deps.sql);
  if (unfinished !== null) {
    throw new EscrowError(
      `this database holds a restore (of ${unfinished.source}, committed ${unfinished.since}) whose index builds ` +
        `did not finish (${unfinished.indexes.length} indexes); run \`npm run restore\` again to build them`,
    );
  }
  const existing = await countRestoreTargetRows(deps.sql);
  const occupied = Object.entries(existing).filter(([, n]) => n > 0);
  if (occupied.length > 0 && !options.force) {
    throw new EscrowError(
      `the database is not empty (${occupied.map(([t, n]) => `${n} ${t}`).join(', ')}); a restore loads into an ` +
        'empty database. To add only the links whose codes it does not have (existing codes are never changed), ' +
        'restore with --force',
    );
  }
  const merge = occupied.length > 0;
  const files = ESCROW_TABLES.flatMap((spec) => manifest.files.filter((f) => f.table === spec.table));
  const tables: RestoreSummary['tables'] = {};
  const refused = emptyRefusedRestoreRows();
  const rules = { policy: deps.targetPolicy, refused, refusedCodes: new Set<string>() };
  const linksFile = files.find((f) => f.table === 'links');
  // The exported search text is taken as it is when this database folds exactly as the exporting one did
  // (ADR 0092): folding every title and URL again is most of a large restore's time.
  const takeSearchText =
    !merge &&
    linksFile !== undefined &&
    columnsByTable.get('links')!.includes('search_text') &&
    manifest.schema.searchFold !== undefined &&
    manifest.schema.searchFold === (await searchFoldDigest(deps.sql));
  const searchText: RestoreSummary['searchText'] = {
    source: takeSearchText ? 'exported' : 'folded',
    sampled: 0,
    mismatched: 0,
  };
  let indexed = { built: 0, ms: 0 };
  const embedded = await isEmbeddedPglite(deps.sql);
  let linkWidths = new Map<string, number>();
  const loadTable = async (tx: Tx, file: EscrowFile) => {
    // In a merge, audit entries get new ids (the database's own sequence).
    const columns = columnsByTable
      .get(file.table)!
      .filter(
        (c) => !(merge && (file.table === 'audit_log' || file.table === 'webhook_endpoints') && c === 'id'),
      );
    const before = refused.byTable[file.table] ?? 0;
    const tableStarted = Date.now();
    const sample =
      takeSearchText && file.table === 'links'
        ? { every: Math.max(1, Math.ceil(file.rows / SEARCH_TEXT_SAMPLE)), codes: [] as string[] }
        : undefined;
    if (sample) await setSearchTextTrigger(tx, false);
    const inserted = byCopy(file, merge, embedded)
      ? await copyFile(
          tx,
          options.dir,
          file,
          await listCopyColumns(tx, file.table, columns),
          rules,
          options.context,
          sample,
        )
      : await loadFile(tx, options.dir, file, columns, merge, rules, options.context, sample);
    // Statistics for the checks and joins that follow, and the column widths that order the index builds.
    if (file.table === 'links' && !merge) linkWidths = await analyzeColumnWidths(tx, 'links');
    if (sample) {
      searchText.sampled = sample.codes.length;
      searchText.mismatched = await countSearchTextMismatches(tx, sample.codes);
      if (searchText.mismatched > 0) {
        searchText.source = 'refolded';
        const refolded = await refoldSearchText(tx);
        deps.logger?.warn(
          { sampled: searchText.sampled, mismatched: searchText.mismatched, refolded },
          "the export's search text disagreed with this database's folding on a sample: every link folded again",
        );
      }
      await setSearchTextTrigger(tx, true);
    }
    const left = (refused.byTable[file.table] ?? 0) - before;
    tables[file.table] = { inExport: file.rows, inserted, ms: Date.now() - tableStarted };
    options.progress?.(
      `${file.table}: ${inserted} of ${file.rows} rows loaded in ${seconds(tables[file.table]!.ms)}`,
    );
    deps.logger?.info(
      { table: file.table, inserted, rows: file.rows, refused: left },
      'escrow table restored',
    );
    if (!merge && inserted + left !== file.rows) {
      throw new EscrowError(
        `${file.name}: ${inserted} rows loaded and ${left} refused, the manifest says ${file.rows}`,
      );
    }
  };

  // Into an empty database: the indexes and foreign keys go, and the links load and commit first, with a note
  // that the load is under way (ADR 0096). Their indexes are built while the other tables load.
  let note: PendingIndexes | null = null;
  const first = merge ? [] : files.filter((f) => f.table === 'links');
  if (!merge) {
    note = await deps.sql.begin(async (tx) => {
      const tableNames = files.map((f) => f.table);
      const indexes = await listPlainIndexes(tx, tableNames);
      await dropIndexes(
        tx,
        indexes.map((i) => i.name),
      );
      // The foreign keys are checked once, after the load (escrow_store.ts).
      const foreignKeys = await listForeignKeys(tx, tableNames);
      await dropForeignKeys(tx, foreignKeys);
      const pending = {
        since: new Date().toISOString(),
        source: options.dir,
        indexes,
        foreignKeys,
        loading: true,
      };
      await recordPendingIndexes(tx, pending);
      for (const file of first) await loadTable(tx, file);
      return pending;
    });
  }
  const linksCommitted = Date.now();
  const backends = new Set<number>();
  const stopBuilds = new AbortController();
  // Embedded PGlite serves one session: a build there would only wait for the load, so all its builds come last.
  const builds =
    note !== null && !embedded
      ? new IndexBuildQueue(deps.sql, {
          jobs: options.indexJobs,
          backends,
          signal: stopBuilds.signal,
          widths: linkWidths,
          ...(options.progress ? { progress: options.progress } : {}),
        })
      : null;
  const ofLinks = (i: { table?: string }) => i.table === 'links';
  const linksBuilt = builds?.add((note?.indexes ?? []).filter(ofLinks)) ?? Promise.resolve();
  linksBuilt.catch(() => {}); // awaited below, or the load failed first
  /**
   * What makes the load whole: the foreign keys added back (each row checked), the sequences, the re-scan request,
   * the audit entry, and the note's `loading` cleared (what is left is building indexes, which a later run
   * finishes rather than undoes). In a merge this is the end of its one transaction.
   */
  const finishLoad = async (tx: Tx) => {
    const foreignKeys = note?.foreignKeys ?? [];
    const keysStarted = Date.now();
    await addForeignKeys(tx, foreignKeys).catch((error: unknown) => {
      const detail = (error as { detail?: string }).detail;
      throw new EscrowError(
        `the export's rows do not hold together: ${(error as Error).message}${detail ? ` (${detail})` : ''}`,
      );
    });
    if (foreignKeys.length > 0) {
      options.progress?.(
        `${foreignKeys.length} foreign keys checked in ${seconds(Date.now() - keysStarted)}`,
      );
    }
    if (!merge) await resetAuditSequence(tx);
    await resetWebhookEndpointSequence(tx);
    const skipped = merge ? await listSkippedCodes(tx, SKIPPED_EXAMPLES) : { count: 0, examples: [] };
    const links = tables.links?.inserted ?? 0;
    if (links > 0) {
      await requestRescanAfterRestore(tx, {
        requestedAt: new Date().toISOString(),
        links,
        source: manifest.snapshotAt,
      });
    }
    await insertAuditEntry(tx, {
      code: null,
      actor: options.actor ?? 'system:restore',
      action: 'escrow.restored',
      after: {
        mode: merge ? 'merge' : 'empty',
        snapshotAt: manifest.snapshotAt,
        links,
        linksInExport: manifest.counts.links,
        refused: { total: refused.total, byTable: refused.byTable, byRule: refused.byRule },
        searchText,
        signature,
      },
      reason: `restore of ${options.dir}`,
    });
    if (note) await recordPendingIndexes(tx, { ...note, loading: false });
    return skipped;
  };
  let loaded: { count: number; examples: string[] };
  try {
    loaded = await deps.sql.begin(async (tx) => {
      if (merge) await createInsertedCodesTable(tx);
      for (const file of files) if (!first.includes(file)) await loadTable(tx, file);
      return merge ? finishLoad(tx) : { count: 0, examples: [] };
    });
    if (note !== null) {
      // The other tables' indexes start as soon as their rows are in; the keys are added once the links' indexes
      // exist (adding a key to links waits for any build on it, and builds queued behind it would wait too).
      builds?.add(note.indexes.filter((i) => !ofLinks(i))).catch(() => {});
      await linksBuilt;
      loaded = await deps.sql.begin(finishLoad);
    }
  } catch (error) {
    if (note) {
      // The builds are stopped (none starts, the running ones are cancelled) before the rows go.
      stopBuilds.abort();
      let settled = false;
      const stopped = builds?.finished().catch(() => 0) ?? Promise.resolve(0);
      void stopped.then(() => {
        settled = true;
      });
      builds?.close();
      while (!settled) {
        await cancelBackends(deps.sql, [...backends]);
        await Promise.race([stopped, delay(1000)]);
      }
      await undoUnfinishedLoad(deps.sql);
    }
    throw error;
  }
  builds?.close();
  const early = (await builds?.finished()) ?? 0;
  const built = await finishPendingIndexes(deps.sql, {
    jobs: options.indexJobs,
    ...(options.progress ? { progress: options.progress } : {}),
  });
  if (note !== null) {
    // The links' indexes were built while the other tables loaded, theirs as soon as they committed.
    indexed = { built: early + (built?.built ?? 0), ms: Date.now() - linksCommitted };
    options.progress?.(`${indexed.built} indexes built in ${seconds(indexed.ms)} since the links committed`);
  }
  await analyzeTables(
    deps.sql,
    files.map((f) => f.table),
  );
  if (refused.total > 0) {
    deps.logger?.warn(
      {
        refused: refused.total,
        byTable: refused.byTable,
        byRule: refused.byRule,
        examples: refused.examples,
      },
      'rows the restore refused: they break an intake rule (code, target, vendor id) or belong to such a link',
    );
  }
  return {
    mode: merge ? 'merge' : 'empty',
    manifest,
    tables,
    indexes: indexed,
    skippedLinks: loaded.count,
    skippedExamples: loaded.examples,
    refused,
    searchText,
    signature,
    durationMs: Date.now() - started,
  };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** What loadFile checks rows against, and where it counts what it leaves out. */
interface RowRules {
  policy: CanonicalTargetPolicy;
  refused: RefusedRestoreRows;
  /** Codes of links left out: their rows in later tables are left out too. */
  refusedCodes: Set<string>;
}

/**
 * Streams one JSON-lines file into its table in batches; every line must be a JSON object (the line number of a
 * bad one is named); a row that breaks an intake rule is left out and counted. One batch is in Postgres while the
 * next is read and checked here, so the two processes work side by side. `sample`: every `every`-th loaded link's
 * code is kept (the search-text check). Returns the rows inserted.
 */
async function loadFile(
  tx: Tx,
  dir: string,
  file: EscrowFile,
  columns: string[],
  merge: boolean,
  rules: RowRules,
  context: TaskContext | undefined,
  sample?: { every: number; codes: string[] },
): Promise<number> {
  const lines = readLines(join(dir, file.name));
  let batch: string[] = [];
  let batchBytes = 0;
  let firstLine = 1;
  let lineNo = 0;
  let inserted = 0;
  // The batch Postgres is loading; its failure is kept until this loop looks (never an unhandled rejection).
  let inFlight: Promise<void> = Promise.resolve();
  let failure: EscrowError | undefined;
  const settle = async () => {
    await inFlight;
    if (failure) throw failure;
  };
  const flush = async () => {
    if (batch.length === 0) return;
    await settle();
    const jsonArray = `[${batch.join(',')}]`;
    const lines = `${firstLine}-${lineNo}`;
    const line = lineNo;
    inFlight = insertEscrowRows(tx, {
      table: file.table,
      columns,
      jsonArray,
      merge,
      lastClickedAt: file.table === 'links' && file.columns.includes('last_clicked_at'),
    }).then(
      (n) => {
        inserted += n;
        context?.heartbeat({ table: file.table, line });
      },
      (error: unknown) => {
        failure = new EscrowError(
          `${file.name} lines ${lines}: the database refused them: ${(error as Error).message}`,
        );
      },
    );
    if (context) throwIfCancelled(context);
    batch = [];
    batchBytes = 0;
    firstLine = lineNo + 1;
  };
  try {
    for await (const line of lines) {
      lineNo++;
      const row = checkLine(file, line, lineNo);
      const problem = findRestoreRowProblem(file.table, row, rules.policy, rules.refusedCodes);
      if (problem !== null) {
        countRefusedRow(rules.refused, file, lineNo, problem);
        continue;
      }
      // A link's safety verdict is reset here, on both ways in (asRestoredLink).
      const loaded = file.table === 'links' ? JSON.stringify(asRestoredLink(row)) : line;
      batch.push(loaded);
      batchBytes += loaded.length;
      if (sample && lineNo % sample.every === 0) sample.codes.push(row.code as string);
      if (batch.length >= BATCH_MAX_ROWS || batchBytes >= BATCH_MAX_BYTES) await flush();
    }
    await flush();
  } finally {
    // Whatever stopped the loop, the batch in Postgres is waited for before the transaction goes on or ends.
    await inFlight;
  }
  await settle();
  return inserted;
}

/**
 * Whether `file` loads by COPY (copyFile) rather than in JSON batches (loadFile): into an empty database, on a
 * server (embedded PGlite takes no COPY FROM STDIN), for every table but the webhook endpoints (each gets a new
 * secret made in SQL; there are a handful) and but an older export's links with a column that moved elsewhere.
 */
function byCopy(file: EscrowFile, merge: boolean, embedded: boolean): boolean {
  if (merge || embedded || file.table === 'webhook_endpoints') return false;
  const moved = MOVED_ESCROW_COLUMNS[file.table] ?? {};
  return !file.columns.some((c) => moved[c] !== undefined);
}

/** COPY text gathered before it is sent (a chunk per write). */
const COPY_CHUNK_CHARS = 1 << 20;

/**
 * Streams one JSON-lines file into its (empty) table through `COPY … FROM STDIN`: every line checked as loadFile
 * checks it, each kept row written as a COPY line (copy_text_rows.ts). Postgres inserts while the next chunk is
 * read and checked here. A row the database refuses fails the COPY; the error names the file's line. Returns the
 * rows inserted.
 */
async function copyFile(
  tx: Tx,
  dir: string,
  file: EscrowFile,
  columns: CopyColumn[],
  rules: RowRules,
  context: TaskContext | undefined,
  sample?: { every: number; codes: string[] },
): Promise<number> {
  const copy = await openCopyIn(
    tx,
    file.table,
    columns.map((c) => c.name),
  );
  // File lines left out, in order: the COPY's own line numbers skip them.
  const refusedLines: number[] = [];
  let chunk = '';
  let lineNo = 0;
  let inserted = 0;
  try {
    for await (const line of readLines(join(dir, file.name))) {
      lineNo++;
      const row = checkLine(file, line, lineNo);
      const problem = findRestoreRowProblem(file.table, row, rules.policy, rules.refusedCodes);
      if (problem !== null) {
        countRefusedRow(rules.refused, file, lineNo, problem);
        refusedLines.push(lineNo);
        continue;
      }
      if (file.table === 'links') asRestoredLink(row);
      try {
        chunk += copyTextRow(row, columns);
      } catch (error) {
        throw new EscrowError(`${file.name} line ${lineNo}: ${(error as Error).message}`);
      }
      inserted++;
      if (sample && lineNo % sample.every === 0) sample.codes.push(row.code as string);
      if (chunk.length >= COPY_CHUNK_CHARS) {
        await copy.write(chunk);
        chunk = '';
        context?.heartbeat({ table: file.table, line: lineNo });
        if (context) throwIfCancelled(context);
      }
    }
    if (chunk !== '') await copy.write(chunk);
    await copy.end();
  } catch (error) {
    await copy.abort(error instanceof Error ? error : new Error(String(error)));
    if (error instanceof EscrowError || !isPostgresError(error)) throw error;
    const at = copyLineOf(error);
    const where = at === null ? '' : ` line ${fileLineOf(at, refusedLines)}`;
    throw new EscrowError(`${file.name}${where}: the database refused it: ${error.message}`);
  }
  return inserted;
}

/** Whether `error` came from Postgres (it has a SQLSTATE). */
function isPostgresError(error: unknown): error is Error & { code: string; where?: string } {
  return error instanceof Error && typeof (error as { code?: unknown }).code === 'string';
}

/** The COPY line an error names in its context (`COPY links, line 12, column …`), or null. */
function copyLineOf(error: { where?: string }): number | null {
  const match = /\bCOPY [^,]+, line (\d+)/.exec(error.where ?? '');
  return match ? Number(match[1]) : null;
}

/** The file's line of the COPY's `n`th line, skipping `refused` (ascending file lines that were never sent). */
function fileLineOf(n: number, refused: readonly number[]): number {
  let line = n;
  for (const skipped of refused) {
    if (skipped > line) break;
    line++;
  }
  return line;
}

/** A line must be one JSON object (a code-bound table's with its code); returns it. */
function checkLine(file: EscrowFile, line: string, lineNo: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new EscrowError(`${file.name} line ${lineNo} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new EscrowError(`${file.name} line ${lineNo} is not a JSON object`);
  }
  if (file.table === 'links' && typeof (value as { code?: unknown }).code !== 'string') {
    throw new EscrowError(`${file.name} line ${lineNo} has no code`);
  }
  return value as Record<string, unknown>;
}

/**
 * The lines of a JSON-lines file, split at `\n` only: readline also ends a line at `\r` and at U+2028/U+2029,
 * which JSON strings may hold unescaped (row_to_json leaves them as they are), so a title with a line separator
 * would cut its row in two.
 */
async function* readLines(path: string): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    rest += decoder.write(chunk as Buffer);
    let at = rest.indexOf('\n');
    let from = 0;
    while (at !== -1) {
      yield rest.slice(from, at);
      from = at + 1;
      at = rest.indexOf('\n', from);
    }
    rest = rest.slice(from);
  }
  rest += decoder.end();
  if (rest !== '') yield rest;
}
