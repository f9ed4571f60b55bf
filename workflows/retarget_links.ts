import {
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import {
  type RetargetLinksInput,
  type RetargetPhase,
  retargetApproveSignal,
  retargetCancelSignal,
  retargetPauseSignal,
  retargetResumeSignal,
  retargetStatusQuery,
} from './contract.ts';

const DEFAULT_BATCH_SIZE = 5_000;
const DEFAULT_APPROVAL_TIMEOUT_MS = 7 * 24 * 3600_000;

const { planRetargetStep, applyRetargetBatch, followRetargetOnBitly } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  // Each step heartbeats every 5 s while it makes progress (activities/adoption_activities.ts).
  heartbeatTimeout: '20s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['BadInput'],
  },
});
const { finishRetargetPlan, setRetargetStatus } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/**
 * One mass retarget (or its undo), `retarget:{runId}` (lib/retarget/). The dry run first: every link the rule
 * matches is planned (new target checked and scanned; nothing changes) and the run shows its count and a
 * sample. It then waits for an admin's approval (signal `retargetApprove`; cancelled after the approval
 * timeout). Approved, it applies the plan in batches (each a transaction with the audit log, then one
 * serving-store refresh), pausable and resumable between batches, cancellable at any point; then Bitly
 * follows through its rate limit. Its status and counts live in retarget_runs.
 */
export async function retargetLinksWorkflow(
  input: RetargetLinksInput,
): Promise<{ status: string; phase: RetargetPhase }> {
  let phase: RetargetPhase = input.phase ?? 'plan';
  let approvedBy = input.approvedBy;
  let paused = false;
  let cancelled = false;
  let cancelledBy: string | undefined;
  setHandler(retargetApproveSignal, ({ by }) => {
    if (phase === 'approval') approvedBy ??= by;
  });
  setHandler(retargetPauseSignal, () => {
    paused = true;
  });
  setHandler(retargetResumeSignal, () => {
    paused = false;
  });
  setHandler(retargetCancelSignal, ({ by }) => {
    cancelled = true;
    cancelledBy = by;
  });
  setHandler(retargetStatusQuery, () => ({ phase, paused, cancelled }));
  const runId = input.runId;
  const stop = async () => {
    await setRetargetStatus({ runId, status: 'cancelled', report: { cancelledBy, cancelledIn: phase } });
    return { status: 'cancelled', phase };
  };

  if (phase === 'plan') {
    let cursor = '';
    for (;;) {
      if (cancelled) return stop();
      const step = await planRetargetStep({ runId, cursor });
      cursor = step.cursor;
      if (step.done) break;
    }
    await finishRetargetPlan({ runId });
    phase = 'approval';
  }
  if (phase === 'approval') {
    const decided = await condition(
      () => approvedBy !== undefined || cancelled,
      input.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
    );
    if (!decided) {
      cancelledBy = 'system: not approved in time';
      return stop();
    }
    if (cancelled) return stop();
    await setRetargetStatus({ runId, status: 'running', approvedBy: approvedBy! });
    phase = 'apply';
  }
  const batchSize = input.batchSize ?? DEFAULT_BATCH_SIZE;
  let cursor = input.applyCursor ?? '';
  while (phase === 'apply' || phase === 'bitly') {
    if (cancelled) return stop();
    if (paused) {
      await setRetargetStatus({ runId, status: 'paused', report: { pausedIn: phase } });
      await condition(() => !paused || cancelled);
      if (cancelled) return stop();
      await setRetargetStatus({ runId, status: 'running' });
    }
    if (phase === 'apply') {
      const step = await applyRetargetBatch({ runId, batchSize, cursor });
      cursor = step.cursor;
      if (step.done) phase = 'bitly';
    } else {
      const step = await followRetargetOnBitly({ runId, cursor: '' });
      if (step.done) phase = 'done';
    }
    if (workflowInfo().continueAsNewSuggested && phase !== 'done') {
      await condition(allHandlersFinished);
      await continueAsNew<typeof retargetLinksWorkflow>({
        ...input,
        phase,
        ...(approvedBy ? { approvedBy } : {}),
      });
    }
  }
  await setRetargetStatus({ runId, status: 'finished', report: { finishedIn: phase } });
  return { status: 'finished', phase };
}
