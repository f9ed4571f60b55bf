import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openFileSink } from '../shared/file_sink.ts';
import type { Logger } from '../shared/logger.ts';
import { prepareOutputDir } from '../shared/output_dir.ts';
import { type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import {
  ESCROW_TABLES,
  type EscrowReader,
  type EscrowSnapshot,
  listTableSizes,
  withEscrowSnapshot,
} from '../stores/escrow_store.ts';
import type { Sql } from '../stores/sql.ts';
import {
  CHECKSUMS_FILE,
  ESCROW_FORMAT,
  ESCROW_FORMAT_VERSION,
  type EscrowFile,
  type EscrowManifest,
  MANIFEST_FILE,
} from './escrow_manifest.ts';
import { SIGNATURE_FILE, signManifest } from './escrow_signature.ts';

/** Bytes of lines per write (and per heartbeat): big enough to amortise the write and the hash, small enough to keep memory flat. */
const BYTES_PER_WRITE = 1 << 20;
/** An export holds every link, report and audit entry: readable by its owner only. */
const EXPORT_FILE_MODE = 0o600;
const EXPORT_FOLDER_MODE = 0o700;

export interface ExportEscrowOptions {
  /** A directory that does not exist yet or is empty. */
  outDir: string;
  /** Include audit entries and click aggregates (default true). */
  history?: boolean;
  /** Heartbeats (Temporal), cancellation. */
  context?: TaskContext;
  /** ESCROW_SIGNING_KEY: the manifest is signed (manifest.json.sig, HMAC-SHA256) when set. */
  signingKey?: string | undefined;
  /**
   * Tables written side by side, each reader on its own connection in the same snapshot (default 2; always 1 on
   * embedded PGlite, whose one session cannot share a snapshot). The pool needs this many connections free.
   */
  jobs?: number;
}

/** Two readers: one for `links`, the largest table, and one for the rest, which together take about as long. */
export const DEFAULT_EXPORT_JOBS = 2;
/** There are nine tables; more readers than that would wait for nothing. */
export const MAX_EXPORT_JOBS = 9;

/**
 * Writes every link (deleted ones too, so their codes stay reserved), its vendor mappings, reader reports,
 * the blocklist and (with `history`) the audit log and click aggregates to `outDir` as JSON lines, one file per
 * table, from ONE read-only snapshot: a consistent picture however long it takes and whatever is written
 * meanwhile. Streamed: each table is one COPY along its primary key (escrow_store.ts), its rows' JSON bytes
 * going through a SHA-256 to the file a megabyte at a time, so the first lines are written at once and memory
 * stays flat whatever the size. The manifest (counts, bytes, SHA-256 and columns per file) is written
 * last; a folder without one is an export that did not finish. On failure the files written are removed. Files
 * are created 0600 in a 0700 folder; with a signing key the manifest's signature is written just before it.
 */
export async function exportEscrow(
  deps: { sql: Sql; logger?: Logger; shortBaseUrl?: string },
  options: ExportEscrowOptions,
): Promise<EscrowManifest> {
  const started = Date.now();
  const history = options.history ?? true;
  const created = await prepareOutputDir(options.outDir, 'an export', { mode: EXPORT_FOLDER_MODE });
  const written: string[] = [];
  try {
    const manifest = await withEscrowSnapshot(deps.sql, async (snapshot) => {
      const tables = ESCROW_TABLES.filter((spec) => !spec.history || history).map((spec) => spec.table);
      for (const table of tables) written.push(`${table}.jsonl`);
      const byTable = await writeTables(snapshot, tables, {
        outDir: options.outDir,
        jobs: snapshot.shareable ? Math.max(1, Math.trunc(options.jobs ?? DEFAULT_EXPORT_JOBS)) : 1,
        context: options.context,
        logger: deps.logger,
        sizes: deps.sql,
      });
      // The manifest lists the files in load order, whichever finished first.
      const files = tables.map((table) => byTable.get(table)!);
      const finishedAt = new Date();
      return {
        format: ESCROW_FORMAT,
        formatVersion: ESCROW_FORMAT_VERSION,
        snapshotAt: snapshot.snapshotAt,
        finishedAt: finishedAt.toISOString(),
        durationMs: finishedAt.getTime() - started,
        schema: {
          lastMigration: snapshot.lastMigration,
          ...(snapshot.searchFold ? { searchFold: snapshot.searchFold } : {}),
        },
        source: deps.shortBaseUrl ? { shortBaseUrl: deps.shortBaseUrl } : {},
        history,
        counts: {
          links: snapshot.linkCounts.total,
          deletedLinks: snapshot.linkCounts.deleted,
          linksByStatus: snapshot.linkCounts.byStatus,
        },
        files,
      } satisfies EscrowManifest;
    });
    const sums = manifest.files.map((f) => `${f.sha256}  ${f.name}\n`).join('');
    written.push(CHECKSUMS_FILE, SIGNATURE_FILE, MANIFEST_FILE);
    const mode = EXPORT_FILE_MODE;
    await writeFile(join(options.outDir, CHECKSUMS_FILE), sums, { mode });
    const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
    if (options.signingKey) {
      await writeFile(join(options.outDir, SIGNATURE_FILE), signManifest(manifestText, options.signingKey), {
        mode,
      });
    }
    // Renamed into place: a manifest is either whole or absent.
    const temporary = join(options.outDir, `.${MANIFEST_FILE}.partial`);
    await writeFile(temporary, manifestText, { mode });
    await rename(temporary, join(options.outDir, MANIFEST_FILE));
    return manifest;
  } catch (error) {
    if (created) await rm(options.outDir, { recursive: true, force: true });
    else for (const name of written) await rm(join(options.outDir, name), { force: true });
    await rm(join(options.outDir, `.${MANIFEST_FILE}.partial`), { force: true });
    throw error;
  }
}

/**
 * Writes `tables`, `jobs` at a time, the largest first (by the planner's estimate of its bytes): one reader
 * on the snapshot's own connection, the others on connections that share it. A table that fails stops the
 * others after their current piece; the first failure is thrown once all have stopped.
 */
async function writeTables(
  snapshot: EscrowSnapshot,
  tables: EscrowFile['table'][],
  options: { outDir: string; jobs: number; context?: TaskContext; logger?: Logger; sizes: Sql },
): Promise<Map<EscrowFile['table'], EscrowFile>> {
  const queue = options.jobs > 1 ? await largestFirst(options.sizes, tables) : [...tables];
  const done = new Map<EscrowFile['table'], EscrowFile>();
  let failure: { error: unknown } | undefined;
  const stopped = () => failure !== undefined;
  const lane = async (reader: EscrowReader) => {
    for (let table = queue.shift(); table && !stopped(); table = queue.shift()) {
      const path = join(options.outDir, `${table}.jsonl`);
      const file = await writeTable(reader, table, path, options.context, stopped);
      if (!file) return;
      done.set(table, file);
      options.logger?.info({ table, rows: file.rows }, 'escrow table written');
    }
  };
  const lanes = Array.from({ length: Math.min(options.jobs, tables.length) }, (_, i) =>
    (i === 0 ? lane(snapshot) : snapshot.shareSnapshot(lane)).catch((error: unknown) => {
      failure ??= { error };
    }),
  );
  await Promise.all(lanes);
  if (failure) throw failure.error;
  return done;
}

/** `tables`, the largest first by the planner's estimate (pg_class): the longest reads start at once. */
async function largestFirst(sql: Sql, tables: EscrowFile['table'][]): Promise<EscrowFile['table'][]> {
  const sizes = await listTableSizes(sql, tables);
  return [...tables].sort((a, b) => (sizes.get(b) ?? 0) - (sizes.get(a) ?? 0));
}

/** Writes one table; returns null when `stopped` said to give up (another table failed). */
async function writeTable(
  reader: EscrowReader,
  table: EscrowFile['table'],
  path: string,
  context: TaskContext | undefined,
  stopped: () => boolean,
): Promise<EscrowFile | null> {
  const columns = await reader.columnsOf(table);
  const out = await openFileSink(path, { exclusive: true, mode: EXPORT_FILE_MODE });
  let rows = 0;
  try {
    for await (const piece of reader.streamLines(table, BYTES_PER_WRITE)) {
      if (context) throwIfCancelled(context);
      if (stopped()) {
        out.abort();
        return null;
      }
      rows += piece.rows;
      await out.write(piece.lines);
      context?.heartbeat({ table, rows });
    }
  } catch (error) {
    out.abort();
    throw error;
  }
  const { bytes, sha256 } = await out.close();
  return { name: `${table}.jsonl`, table, rows, bytes, sha256, columns };
}
