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
