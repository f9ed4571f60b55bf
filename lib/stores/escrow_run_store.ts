import type { Db } from './sql.ts';

export type EscrowRunKind = 'export' | 'snapshot';
export type EscrowRunStatus = 'running' | 'succeeded' | 'failed';

/** One escrow export or static snapshot, scheduled or by hand (migrations/0020_escrow_runs.sql). */
export interface EscrowRunRow {
  id: number;
  kind: EscrowRunKind;
  workflowId: string | null;
  directory: string;
  status: EscrowRunStatus;
  summary: Record<string, unknown>;
  error: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

const COLUMNS = `id, kind, workflow_id AS "workflowId", directory, status, summary, error,
  started_at AS "startedAt", finished_at AS "finishedAt"`;

export async function insertEscrowRun(
  db: Db,
  run: { kind: EscrowRunKind; workflowId: string | null; directory: string },
): Promise<number> {
  const [row] = await db<{ id: number }[]>`
    INSERT INTO escrow_runs (kind, workflow_id, directory) VALUES (${run.kind}, ${run.workflowId}, ${run.directory})
    RETURNING id`;
  return row!.id;
}

export async function finishEscrowRun(
  db: Db,
  id: number,
  outcome: { status: Exclude<EscrowRunStatus, 'running'>; summary?: Record<string, unknown>; error?: string },
): Promise<void> {
  await db`
    UPDATE escrow_runs SET status = ${outcome.status}, summary = ${db.json((outcome.summary ?? {}) as never)},
      error = ${outcome.error ?? null}, finished_at = now()
    WHERE id = ${id}`;
}

/** The newest runs of a kind, newest first. */
export async function listEscrowRuns(db: Db, kind: EscrowRunKind, limit = 5): Promise<EscrowRunRow[]> {
  return db<EscrowRunRow[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM escrow_runs WHERE kind = ${kind} ORDER BY started_at DESC, id DESC LIMIT ${limit}`;
}

/**
 * Per kind, seconds since the last successful run and since the first run (null when none): two index reads
 * each (escrow_runs_kind_idx), for the metrics at scrape time.
 */
export async function getEscrowRunAges(
  db: Db,
  kind: EscrowRunKind,
): Promise<{ sinceSuccessSeconds: number | null; sinceFirstSeconds: number | null }> {
  const [row] = await db<{ sinceSuccessSeconds: number | null; sinceFirstSeconds: number | null }[]>`
    SELECT
      (SELECT extract(epoch FROM now() - coalesce(finished_at, started_at))::float8 FROM escrow_runs
        WHERE kind = ${kind} AND status = 'succeeded' ORDER BY started_at DESC LIMIT 1) AS "sinceSuccessSeconds",
      (SELECT extract(epoch FROM now() - started_at)::float8 FROM escrow_runs
        WHERE kind = ${kind} ORDER BY started_at ASC LIMIT 1) AS "sinceFirstSeconds"`;
  return {
    sinceSuccessSeconds: row?.sinceSuccessSeconds ?? null,
    sinceFirstSeconds: row?.sinceFirstSeconds ?? null,
  };
}
