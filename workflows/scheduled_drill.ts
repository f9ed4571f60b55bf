import { ApplicationFailure, executeChild, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { changeFrontWorkflow } from './change_front.ts';
import type { ChangeFrontReport, ScheduledDrillInput, ScheduledDrillReport } from './contract.ts';

const { reserveScheduledDrill } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 },
});

/**
 * The failover drill on a schedule (`drill-schedule:{taskQueue}`, every DRILL_INTERVAL): the drill an admin
 * starts from the operations page (changeFrontWorkflow, towards in-house: preflight reconciliation, every active
 * code verified, the estimate), reserved the same way, so it never runs beside another front change (then it is
 * skipped). Its report is the drill's ops_runs row; a failed drill fails this run too.
 */
export async function scheduledDrillWorkflow(input: ScheduledDrillInput): Promise<ScheduledDrillReport> {
  const workflowId = `drill:inhouse:scheduled:${new Date().toISOString()}`;
  const reservation = await reserveScheduledDrill({ workflowId, to: 'inhouse' });
  if (!reservation.reserved) return { workflowId: null, outcome: 'skipped', running: reservation.running };
  let report: ChangeFrontReport;
  try {
    report = await executeChild<typeof changeFrontWorkflow>('changeFrontWorkflow', {
      workflowId,
      args: [
        {
          to: 'inhouse',
          drill: true,
          requestedBy: 'schedule',
          dnsTtlSeconds: input.dnsTtlSeconds,
          ...(input.verifyPerCall ? { verifyPerCall: input.verifyPerCall } : {}),
        },
      ],
    });
  } catch (error) {
    // The child's own failure (its cause) says why; the drill's ops_runs row has the whole report.
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const why = cause instanceof Error ? cause.message : String(cause);
    throw ApplicationFailure.nonRetryable(`the scheduled drill ${workflowId} failed: ${why}`, 'DrillFailed');
  }
  return { workflowId, outcome: 'passed', report };
}
