import { rename, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pruneFolders, toExportFolderName } from '../escrow/escrow_folders.ts';
import type { RedirectSettings } from '../redirect/redirect_policy.ts';
import type { SnapshotFormat } from '../shared/config.ts';
import { PermanentFailure } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { TaskContext } from '../shared/task_context.ts';
import { finishEscrowRun, insertEscrowRun } from '../stores/escrow_run_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import type { RefusedSnapshotRows } from './snapshot_rows.ts';
import { SNAPSHOT_MANIFEST, writeSnapshotFiles } from './write_snapshot.ts';

/** Folders the Schedule writes under SNAPSHOT_DIR; `current` is a symlink to the newest. */
export const SNAPSHOT_FOLDER_PATTERN = /^snapshot-\d{8}T\d{6}Z$/;
export const CURRENT_SNAPSHOT_LINK = 'current';

export interface ScheduledSnapshotDeps {
  sql: Sql;
  logger: Logger;
  shortBaseUrl: string;
  /** SHORT_DOMAINS, the default first: one snapshot per domain (ADR 0078); absent: the default's. */
  shortDomains?: readonly string[];
  /** SHORT_DOMAIN_UNKNOWN_HOST, for the all-domains nginx configuration. */
  unknownHost?: 'default' | 'not_found';
  redirect: RedirectSettings;
  /** Where links may point: rows that break it are left out of the snapshot. */
  targetPolicy: CanonicalTargetPolicy;
  rootRedirectUrl: string | undefined;
  snapshot: { dir: string | undefined; formats: readonly SnapshotFormat[]; keep: number };
}

export interface ScheduledSnapshotReport {
  directory: string;
  generatedAt: string;
  answers: number;
  byStatus: Record<string, number>;
  formats: SnapshotFormat[];
  /** Rows left out because their code or target breaks a rule (counts and escaped examples). */
  refused: RefusedSnapshotRows;
  durationMs: number;
  pruned: string[];
}

/**
 * Writes a static snapshot into SNAPSHOT_DIR (`snapshot-<UTC time>/`), then points `SNAPSHOT_DIR/current` at it in
 * one atomic rename (a web server serving `current/` never sees half a snapshot; nginx reads its maps at reload),
 * records it in escrow_runs and removes the oldest beyond SNAPSHOT_KEEP. Paths inside the nginx configuration go
 * through `current`, so one `nginx -s reload` after each run follows the new answers.
 */
export async function writeStaticSnapshot(
  deps: ScheduledSnapshotDeps,
  input: { workflowId: string },
  context: TaskContext,
): Promise<ScheduledSnapshotReport> {
  const root = deps.snapshot.dir;
  if (!root) throw new PermanentFailure('SNAPSHOT_DIR is not set on this worker', 'NotConfigured');
  const name = toExportFolderName(new Date(), 'snapshot');
  const directory = join(root, name);
  const runId = await insertEscrowRun(deps.sql, {
    kind: 'snapshot',
    workflowId: input.workflowId,
    directory,
  });
  try {
    const summary = await writeSnapshotFiles(
      { sql: deps.sql, logger: deps.logger },
      {
        outDir: directory,
        publicDir: join(root, CURRENT_SNAPSHOT_LINK),
        formats: deps.snapshot.formats,
        shortBaseUrl: deps.shortBaseUrl,
        shortDomains: deps.shortDomains,
        ...(deps.unknownHost ? { unknownHost: deps.unknownHost } : {}),
        redirect: deps.redirect,
        targetPolicy: deps.targetPolicy,
        rootRedirectUrl: deps.rootRedirectUrl,
        context,
      },
    );
    const temporary = join(root, `.${CURRENT_SNAPSHOT_LINK}-${process.pid}-${Date.now()}`);
    await symlink(name, temporary);
    try {
      await rename(temporary, join(root, CURRENT_SNAPSHOT_LINK));
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    const pruned = await pruneFolders(root, {
      pattern: SNAPSHOT_FOLDER_PATTERN,
      marker: SNAPSHOT_MANIFEST,
      keep: deps.snapshot.keep,
      protect: name,
    });
    const report: ScheduledSnapshotReport = {
      directory,
      generatedAt: summary.generatedAt,
      answers: summary.answers,
      byStatus: summary.byStatus,
      formats: summary.formats,
      refused: summary.refused,
      durationMs: summary.durationMs,
      pruned,
    };
    await finishEscrowRun(deps.sql, runId, { status: 'succeeded', summary: { ...report } });
    deps.logger.info({ directory, answers: summary.answers, pruned }, 'static snapshot written');
    return report;
  } catch (error) {
    await finishEscrowRun(deps.sql, runId, { status: 'failed', error: (error as Error).message }).catch(
      () => {},
    );
    throw error;
  }
}
