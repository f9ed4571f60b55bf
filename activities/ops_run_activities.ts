import {
  finishOpsRun,
  insertOpsRun,
  type OpsRunKind,
  type OpsRunStatus,
} from '../lib/stores/ops_run_store.ts';
import type { ActivityDeps } from './deps.ts';

/** ops_runs bookkeeping for operations workflows (re-scans, reconciliations, failovers): keyed by workflow ID. */
export function createOpsRunActivities(deps: ActivityDeps) {
  return {
    /** Records the start of a run (idempotent). */
    async recordOpsRunStarted(input: {
      kind: OpsRunKind;
      workflowId: string;
      report?: Record<string, unknown>;
    }): Promise<void> {
      await insertOpsRun(deps.sql, input);
      deps.logger.info({ kind: input.kind, workflowId: input.workflowId }, 'operations run started');
    },

    /** Records the end of a run with its report (idempotent). */
    async recordOpsRunFinished(input: {
      workflowId: string;
      status: Exclude<OpsRunStatus, 'running'>;
      report: Record<string, unknown>;
    }): Promise<void> {
      await finishOpsRun(deps.sql, input.workflowId, input.status, input.report);
      const log =
        input.status === 'succeeded'
          ? deps.logger.info.bind(deps.logger)
          : deps.logger.error.bind(deps.logger);
      log(
        { workflowId: input.workflowId, status: input.status, report: input.report },
        'operations run finished',
      );
    },
  };
}
