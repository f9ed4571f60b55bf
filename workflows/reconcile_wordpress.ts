import {
  ActivityFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import {
  type BreakerDecision,
  type ReconcileWordPressInput,
  type WordPressReconcileReport,
  wordpressBreakerDecisionSignal,
  wordpressChangedSignal,
} from './contract.ts';

/** How long a pass whose breaker tripped waits for an admin before its hold is discarded. */
const DEFAULT_DECISION_TIMEOUT_MS = 7 * 24 * 3600_000;

/** Passes before continuing as new (each pass adds a few events; requests during a pass add one more pass). */
const PASSES_PER_RUN = 20;

const { reconcileWordPressSite } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '30s',
  // A site down for long fails the run (visible on the operations page); the next change or schedule retries.
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 6 },
});
const { recordOpsRunStarted, recordOpsRunFinished, summarizeWordPressRun, forgetReconcileRun } =
  proxyActivities<Activities>({
    startToCloseTimeout: '1m',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
  });
const { decideBreakerHold } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/**
 * One site's WordPress reconciliation, `reconcile:wordpress:{taskQueue}:{site}`, started by a change of the
 * site's permalinks or home URL (site.permalinks_changed) or at the end of a backfill. Reads the site's signed
 * listing and repairs its post links, WordPress winning (lib/reconcile/reconcile_wordpress.ts). A request that
 * arrives during a pass (signalWithStart of the same ID) makes it pass once more, so one at a time per site and
 * nothing missed. Each pass is an ops_runs row (kind `reconcile`) with its counts.
 *
 * The breaker (ADR 0057): a pass that would retarget or make gone more of the site's links than its budget
 * allows puts those changes in a hold and waits here for an admin's decision (signal `wordpressBreakerDecision`,
 * discarded after the decision timeout); the decision applies or forgets them. Decisions on the site's other
 * holds (post events beyond the hourly budget) arrive by the same signal and are applied before the next pass.
 */
export async function reconcileWordPressWorkflow(
  input: ReconcileWordPressInput,
): Promise<WordPressReconcileReport> {
  let requested = 0;
  const reasons: string[] = [];
  setHandler(wordpressChangedSignal, ({ reason }) => {
    requested++;
    reasons.push(reason);
  });
  const decisions: BreakerDecision[] = [...(input.decisions ?? [])];
  setHandler(wordpressBreakerDecisionSignal, (decision) => {
    decisions.push(decision);
  });
  const applyDecisions = async () => {
    while (decisions.length > 0) await decideBreakerHold(decisions.shift()!);
  };
  const { workflowId, runId } = workflowInfo();
  let passes = input.passes ?? 0;
  let handled = 0;
  let report: WordPressReconcileReport | undefined;
  do {
    await applyDecisions();
    // Requests received so far are covered by this pass (the start's own signal included).
    handled = Math.max(requested, 1);
    passes++;
    const runKey = `${workflowId}:${runId.slice(0, 8)}:${passes}`;
    const startedAtMs = Date.now();
    const reason = reasons.at(-1) ?? input.reason;
    const repair = input.repair ?? true;
    await recordOpsRunStarted({
      kind: 'reconcile',
      workflowId: runKey,
      report: { reason, repair, site: input.site },
    });
    try {
      const result = await reconcileWordPressSite({
        runId: runKey,
        site: input.site,
        repair,
        startedAtMs,
        workflowId,
      });
      let breaker: WordPressReconcileReport['breaker'];
      if (result.held) {
        const { holdId } = result.held;
        const decided = await condition(
          () => decisions.some((d) => d.holdId === holdId),
          input.decisionTimeoutMs ?? DEFAULT_DECISION_TIMEOUT_MS,
        );
        const at = decisions.findIndex((d) => d.holdId === holdId);
        const decision = decided
          ? decisions.splice(at, 1)[0]!
          : { holdId, approve: false, by: 'system: not decided in time' };
        const outcome = await decideBreakerHold(decision);
        breaker = { holdId, ...outcome, decidedBy: decision.by };
      }
      const wordpress = await summarizeWordPressRun({ runId: runKey });
      report = {
        site: input.site,
        reason,
        repair,
        passes,
        read: result.read,
        complete: result.complete,
        wordpress,
        durationMs: Date.now() - startedAtMs,
        ...(result.error ? { error: result.error } : {}),
        ...(result.rebound ? { rebound: result.rebound } : {}),
        ...(result.reviewed ? { reviewed: result.reviewed } : {}),
        ...(result.migration ? { migration: result.migration } : {}),
        ...(breaker ? { breaker } : {}),
      };
      await recordOpsRunFinished({
        workflowId: runKey,
        status: result.error ? 'failed' : 'succeeded',
        report,
      });
      await forgetReconcileRun({ runId: runKey });
    } catch (error) {
      await CancellationScope.nonCancellable(async () => {
        await recordOpsRunFinished({
          workflowId: runKey,
          status: isCancellation(error) ? 'cancelled' : 'failed',
          report: { site: input.site, error: describeFailure(error) },
        });
        await forgetReconcileRun({ runId: runKey });
      });
      throw error;
    }
    if (requested > handled && passes % PASSES_PER_RUN === 0) {
      await continueAsNew<typeof reconcileWordPressWorkflow>({
        ...input,
        reason: reasons.at(-1) ?? input.reason,
        passes,
        decisions,
      });
    }
  } while (requested > handled);
  await applyDecisions();
  return report!;
}

/** The message that says what went wrong: an activity's own failure, not "Activity task failed". */
function describeFailure(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}
