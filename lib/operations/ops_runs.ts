// ops_runs bookkeeping of operations workflows (re-scans, reconciliations, failovers), keyed by workflow ID, and
// the runs the operations page and API list.
import type { Logger } from '../shared/logger.ts';
import {
  finishOpsRun,
  insertOpsRun,
  listLatestOpsRuns,
  listOpsRuns,
  OPS_RUN_KINDS,
  type OpsRunKind,
  type OpsRunRow,
  type OpsRunStatus,
} from '../stores/ops_run_store.ts';
import type { Sql } from '../stores/sql.ts';

export {
  listLatestOpsRuns,
  listOpsRuns,
  OPS_RUN_KINDS,
  type OpsRunKind,
  type OpsRunRow as OpsRun,
  type OpsRunStatus,
};

/** Records the start of a run (idempotent). */
export async function recordOpsRunStarted(
  deps: { sql: Sql; logger: Logger },
  input: { kind: OpsRunKind; workflowId: string; report?: Record<string, unknown> },
): Promise<void> {
  await insertOpsRun(deps.sql, input);
  deps.logger.info({ kind: input.kind, workflowId: input.workflowId }, 'operations run started');
}

/** Records the end of a run with its report (idempotent). */
export async function recordOpsRunFinished(
  deps: { sql: Sql; logger: Logger },
  input: { workflowId: string; status: Exclude<OpsRunStatus, 'running'>; report: Record<string, unknown> },
): Promise<void> {
  await finishOpsRun(deps.sql, input.workflowId, input.status, input.report);
  const log =
    input.status === 'succeeded' ? deps.logger.info.bind(deps.logger) : deps.logger.error.bind(deps.logger);
  log(
    { workflowId: input.workflowId, status: input.status, report: input.report },
    'operations run finished',
  );
}
