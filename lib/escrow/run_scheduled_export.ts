import { join } from 'node:path';
import { PermanentFailure } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { TaskContext } from '../shared/task_context.ts';
import { finishEscrowRun, insertEscrowRun } from '../stores/escrow_run_store.ts';
import type { Sql } from '../stores/sql.ts';
import { EXPORT_FOLDER_PATTERN, pruneFolders, toExportFolderName } from './escrow_folders.ts';
import { MANIFEST_FILE } from './escrow_manifest.ts';
import { exportEscrow } from './export_escrow.ts';

export interface ScheduledExportDeps {
  sql: Sql;
  logger: Logger;
  shortBaseUrl: string;
  /** ESCROW_DIR, ESCROW_KEEP and ESCROW_SIGNING_KEY; no dir: exports are not configured on this worker. */
  escrow: { dir: string | undefined; keep: number; signingKey?: string | undefined };
}

export interface ScheduledExportReport {
  directory: string;
  snapshotAt: string;
  links: number;
  deletedLinks: number;
  bytes: number;
  durationMs: number;
  /** Older exports removed to keep ESCROW_KEEP. */
  pruned: string[];
}

/**
 * One escrow export into ESCROW_DIR (`lifeline-escrow-<UTC time>/`), recorded in escrow_runs, then the oldest
 * finished exports beyond ESCROW_KEEP removed (an export still being written is never touched).
 */
export async function writeEscrowExport(
  deps: ScheduledExportDeps,
  input: { workflowId: string },
  context: TaskContext,
): Promise<ScheduledExportReport> {
  const root = deps.escrow.dir;
  if (!root) throw new PermanentFailure('ESCROW_DIR is not set on this worker', 'NotConfigured');
  const name = toExportFolderName(new Date());
  const directory = join(root, name);
  const runId = await insertEscrowRun(deps.sql, { kind: 'export', workflowId: input.workflowId, directory });
  try {
    const manifest = await exportEscrow(
      { sql: deps.sql, logger: deps.logger, shortBaseUrl: deps.shortBaseUrl },
      { outDir: directory, context, signingKey: deps.escrow.signingKey },
    );
    const pruned = await pruneFolders(root, {
      pattern: EXPORT_FOLDER_PATTERN,
      marker: MANIFEST_FILE,
      keep: deps.escrow.keep,
      protect: name,
    });
    const report: ScheduledExportReport = {
      directory,
      snapshotAt: manifest.snapshotAt,
      links: manifest.counts.links,
      deletedLinks: manifest.counts.deletedLinks,
      bytes: manifest.files.reduce((sum, f) => sum + f.bytes, 0),
      durationMs: manifest.durationMs,
      pruned,
    };
    await finishEscrowRun(deps.sql, runId, { status: 'succeeded', summary: { ...report } });
    deps.logger.info({ directory, links: report.links, pruned }, 'escrow export written');
    return report;
  } catch (error) {
    await finishEscrowRun(deps.sql, runId, { status: 'failed', error: (error as Error).message }).catch(
      () => {},
    );
    throw error;
  }
}
