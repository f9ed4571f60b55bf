import type { Db } from './sql.ts';

export const OPS_RUN_KINDS = ['reconcile', 'rescan', 'import', 'failover', 'failback', 'drill'] as const;
export type OpsRunKind = (typeof OPS_RUN_KINDS)[number];
export type OpsRunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface OpsRunRow {
  id: number;
  kind: OpsRunKind;
  workflowId: string;
  status: OpsRunStatus;
  report: Record<string, unknown>;
  startedAt: Date;
  finishedAt: Date | null;
}

const COLUMNS = `id, kind, workflow_id AS "workflowId", status, report, started_at AS "startedAt",
  finished_at AS "finishedAt"`;

/** Records that a run started; a retry (same workflow ID) finds the row already there and changes nothing. */
export async function insertOpsRun(
  db: Db,
  run: { kind: OpsRunKind; workflowId: string; report?: Record<string, unknown> },
): Promise<OpsRunRow> {
  await db`
    INSERT INTO ops_runs (kind, workflow_id, report)
    VALUES (${run.kind}, ${run.workflowId}, ${db.json((run.report ?? {}) as never)})
    ON CONFLICT (workflow_id) DO NOTHING`;
  return (await getOpsRun(db, run.workflowId))!;
}

/** The run of a workflow, or null. */
export async function getOpsRun(db: Db, workflowId: string): Promise<OpsRunRow | null> {
  const rows = await db<
    OpsRunRow[]
  >`SELECT ${db.unsafe(COLUMNS)} FROM ops_runs WHERE workflow_id = ${workflowId}`;
  return rows[0] ?? null;
}

/** Merges `report` into a running run's report (progress). */
export async function updateOpsRunReport(
  db: Db,
  workflowId: string,
  report: Record<string, unknown>,
): Promise<void> {
  await db`
    UPDATE ops_runs SET report = report || ${db.json(report as never)}
    WHERE workflow_id = ${workflowId} AND status = 'running'`;
}

/** Closes a run with its final status and report (idempotent: a finished run is left as it is). */
export async function finishOpsRun(
  db: Db,
  workflowId: string,
  status: Exclude<OpsRunStatus, 'running'>,
  report: Record<string, unknown>,
): Promise<void> {
  await db`
    UPDATE ops_runs SET status = ${status}, report = report || ${db.json(report as never)}, finished_at = now()
    WHERE workflow_id = ${workflowId} AND status = 'running'`;
}

/** The newest runs of a kind (or of every kind), newest first. */
export async function listOpsRuns(
  db: Db,
  options: { kind?: OpsRunKind; limit: number },
): Promise<OpsRunRow[]> {
  const kind = options.kind === undefined ? db`` : db`WHERE kind = ${options.kind}`;
  return db<OpsRunRow[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM ops_runs ${kind} ORDER BY started_at DESC, id DESC LIMIT ${options.limit}`;
}

/** The latest run of each kind. */
export async function listLatestOpsRuns(db: Db): Promise<OpsRunRow[]> {
  return db<OpsRunRow[]>`
    SELECT DISTINCT ON (kind) ${db.unsafe(COLUMNS)}
    FROM ops_runs ORDER BY kind, started_at DESC`;
}

/**
 * The newest succeeded run of `kind` whose report has the key `reportKey` (a full reconciliation's report has
 * `expiry`; a WordPress site's pass has not), started within `withinDays`: a backward walk of ops_runs_kind_idx,
 * bounded by the window, for the metrics at scrape time.
 */
export async function getLatestSucceededRun(
  db: Db,
  options: { kind: OpsRunKind; reportKey: string; withinDays: number },
): Promise<OpsRunRow | null> {
  const rows = await db<OpsRunRow[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM ops_runs
    WHERE kind = ${options.kind} AND status = 'succeeded' AND report ? ${options.reportKey}
      AND started_at > now() - make_interval(days => ${options.withinDays})
    ORDER BY started_at DESC LIMIT 1`;
  return rows[0] ?? null;
}

/**
 * Per front drilled towards (`report.to`): whether the latest finished drill (passed or failed; a cancelled one
 * proves nothing) passed, and when the latest passing one finished.
 */
export async function getDrillResults(
  db: Db,
): Promise<{ to: string; domain: string; passed: boolean; lastSuccessAt: Date | null }[]> {
  // Per front and short domain: a drill's report names its domain unless it is the default's ('').
  return db<{ to: string; domain: string; passed: boolean; lastSuccessAt: Date | null }[]>`
    SELECT DISTINCT ON (report->>'to', coalesce(report->>'domain', ''))
      report->>'to' AS "to", coalesce(report->>'domain', '') AS domain, status = 'succeeded' AS passed,
      (SELECT max(s.finished_at) FROM ops_runs AS s
       WHERE s.kind = 'drill' AND s.status = 'succeeded' AND s.report->>'to' = r.report->>'to'
         AND coalesce(s.report->>'domain', '') = coalesce(r.report->>'domain', '')) AS "lastSuccessAt"
    FROM ops_runs AS r
    WHERE kind = 'drill' AND status IN ('succeeded', 'failed') AND report->>'to' IS NOT NULL
    ORDER BY report->>'to', coalesce(report->>'domain', ''), finished_at DESC, id DESC`;
}
