import {
  ActivityFailure,
  CancellationScope,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import {
  type ReconcileWordPressInput,
  type WordPressReconcileReport,
  wordpressChangedSignal,
} from './contract.ts';

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

/**
 * One site's WordPress reconciliation, `reconcile:wordpress:{taskQueue}:{site}`, started by a change of the
 * site's permalinks or home URL (site.permalinks_changed) or at the end of a backfill. Reads the site's signed
 * listing and repairs its post links, WordPress winning (lib/reconcile/reconcile_wordpress.ts). A request that
 * arrives during a pass (signalWithStart of the same ID) makes it pass once more, so one at a time per site and
 * nothing missed. Each pass is an ops_runs row (kind `reconcile`) with its counts.
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
  const { workflowId, runId } = workflowInfo();
  let passes = input.passes ?? 0;
  let handled = 0;
  let report: WordPressReconcileReport | undefined;
  do {
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
      const result = await reconcileWordPressSite({ runId: runKey, site: input.site, repair, startedAtMs });
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
      });
    }
  } while (requested > handled);
  return report!;
}

/** The message that says what went wrong: an activity's own failure, not "Activity task failed". */
function describeFailure(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}
