import type { Db } from './sql.ts';

export type OpsRunKind = 'reconcile' | 'rescan' | 'import' | 'failover' | 'failback' | 'drill';

export interface OpsRunRow {
  id: number;
  kind: OpsRunKind;
  workflowId: string;
  status: 'running' | 'succeeded' | 'failed' | 'cancelled';
  report: Record<string, unknown>;
  startedAt: Date;
  finishedAt: Date | null;
}

/** The latest run of each kind. */
export async function listLatestOpsRuns(db: Db): Promise<OpsRunRow[]> {
  return db<OpsRunRow[]>`
    SELECT DISTINCT ON (kind) id, kind, workflow_id AS "workflowId", status, report,
           started_at AS "startedAt", finished_at AS "finishedAt"
    FROM ops_runs ORDER BY kind, started_at DESC`;
}
