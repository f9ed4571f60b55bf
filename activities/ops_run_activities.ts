import {
  type OpsRunKind,
  type OpsRunStatus,
  recordOpsRunFinished,
  recordOpsRunStarted,
} from '../lib/operations/ops_runs.ts';
import type { ActivityDeps } from './deps.ts';

/** ops_runs bookkeeping of operations workflows (lib/operations/ops_runs.ts): keyed by workflow ID. */
export function createOpsRunActivities(deps: ActivityDeps) {
  return {
    recordOpsRunStarted: (input: {
      kind: OpsRunKind;
      workflowId: string;
      report?: Record<string, unknown>;
    }) => recordOpsRunStarted(deps, input),
    recordOpsRunFinished: (input: {
      workflowId: string;
      status: Exclude<OpsRunStatus, 'running'>;
      report: Record<string, unknown>;
    }) => recordOpsRunFinished(deps, input),
  };
}
