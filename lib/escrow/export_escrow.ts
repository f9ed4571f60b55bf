import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openFileSink } from '../shared/file_sink.ts';
import type { Logger } from '../shared/logger.ts';
import { prepareOutputDir } from '../shared/output_dir.ts';
import { type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import { ESCROW_TABLES, type EscrowSnapshot, withEscrowSnapshot } from '../stores/escrow_store.ts';
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

/** Rows per page (one statement each): big enough to keep Postgres busy, small enough to keep memory flat. */
const ROWS_PER_FETCH = 2_000;
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
}

/**
 * Writes every link (deleted ones too, so their codes stay reserved), its vendor mappings, reader reports,
 * the blocklist and (with `history`) the audit log and click aggregates to `outDir` as JSON lines, one file per
 * table, from ONE read-only snapshot: a consistent picture however long it takes and whatever is written
 * meanwhile. Streamed: rows go page by page along each table's primary key (escrow_store.ts) through a SHA-256 to
 * the file, a few thousand at a time, so the first lines are written at once and memory stays flat whatever the
 * size. The manifest (counts, bytes, SHA-256 and columns per file) is written
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
      const files: EscrowFile[] = [];
      for (const spec of ESCROW_TABLES) {
        if (spec.history && !history) continue;
        const name = `${spec.table}.jsonl`;
        written.push(name);
        files.push(await writeTable(snapshot, spec.table, join(options.outDir, name), options.context));
        deps.logger?.info({ table: spec.table, rows: files.at(-1)!.rows }, 'escrow table written');
      }
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

async function writeTable(
  snapshot: EscrowSnapshot,
  table: EscrowFile['table'],
  path: string,
  context: TaskContext | undefined,
): Promise<EscrowFile> {
  const columns = await snapshot.columnsOf(table);
  const out = await openFileSink(path, { exclusive: true, mode: EXPORT_FILE_MODE });
  let rows = 0;
  try {
    for await (const batch of snapshot.streamRows(table, ROWS_PER_FETCH)) {
      if (context) throwIfCancelled(context);
      rows += batch.length;
      await out.write(`${batch.join('\n')}\n`);
      context?.heartbeat({ table, rows });
    }
  } catch (error) {
    out.abort();
    throw error;
  }
  const { bytes, sha256 } = await out.close();
  return { name: `${table}.jsonl`, table, rows, bytes, sha256, columns };
}
