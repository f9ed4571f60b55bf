import {
  CancellationScope,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { RescanLinksInput, RescanPosition, RescanReport, RescanTotals } from './contract.ts';

const DEFAULT_LINKS_PER_CALL = 5_000;
// A fresh history every so often keeps replay cheap however many links there are.
const CALLS_PER_RUN = 100;

const { rescanLinks } = proxyActivities<Activities>({
  startToCloseTimeout: '15m',
  // A worker that dies mid-run is noticed within this; its successor resumes from the last heartbeat.
  heartbeatTimeout: '20s',
  retry: {
    initialInterval: '5s',
    backoffCoefficient: 2,
    maximumInterval: '5m',
    nonRetryableErrorTypes: ['BadInput'],
  },
});
const { recordOpsRunStarted, recordOpsRunFinished, summarizeRescanRun } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

function emptyTotals(): RescanTotals {
  return { scanned: 0, changed: 0, blocked: 0, warned: 0, cleared: 0, unverified: 0, conflicts: 0, calls: 0 };
}

/**
 * Re-checks every live destination (links clicked most recently first), in activity calls of a few thousand
 * links that heartbeat their cursor, continuing as new every 100 calls. Started by the re-scan Schedule
 * (`rescan:{taskQueue}`), on demand (`rescan:manual:{taskQueue}`) or after a blocklist change. A changed verdict is
 * stored, audited, logged and synced by the activity; the run's counts land in ops_runs (kind `rescan`).
 */
export async function rescanLinksWorkflow(input: RescanLinksInput = {}): Promise<RescanReport> {
  const { workflowId } = workflowInfo();
  const startedAtMs = input.startedAtMs ?? Date.now();
  let position: RescanPosition = input.position ?? { phase: 'recent', lastClickedAt: null, code: '' };
  const totals = input.totals ?? emptyTotals();
  if (input.startedAtMs === undefined) {
    await recordOpsRunStarted({
      kind: 'rescan',
      workflowId,
      report: { reason: input.reason ?? 'schedule', ...(input.contains ? { contains: input.contains } : {}) },
    });
  }
  let done = false;
  try {
    for (
      let calls = 0;
      calls < (input.callsPerRun ?? CALLS_PER_RUN) && !done && !workflowInfo().continueAsNewSuggested;
      calls++
    ) {
      const page = await rescanLinks({
        runId: workflowId,
        startedAtMs,
        cursor: position,
        ...(input.contains ? { contains: input.contains } : {}),
        maxLinks: input.linksPerCall ?? DEFAULT_LINKS_PER_CALL,
        scannedBefore: totals.scanned,
      });
      for (const key of Object.keys(page.counts) as (keyof typeof page.counts)[])
        totals[key] += page.counts[key];
      totals.calls++;
      position = page.cursor;
      done = page.done;
    }
  } catch (error) {
    // The run's row must say how it ended even when the workflow is cancelled.
    await CancellationScope.nonCancellable(() =>
      recordOpsRunFinished({
        workflowId,
        status: isCancellation(error) ? 'cancelled' : 'failed',
        report: { ...totals, error: error instanceof Error ? error.message : String(error) },
      }),
    );
    throw error;
  }
  if (!done) await continueAsNew<typeof rescanLinksWorkflow>({ ...input, startedAtMs, position, totals });
  // The counts that matter come from Postgres (exact across crashes); the activities' tallies show the work done.
  const summary = await summarizeRescanRun({
    runId: workflowId,
    startedAtMs,
    ...(input.contains ? { contains: input.contains } : {}),
  });
  const durationMs = Date.now() - startedAtMs;
  const report: RescanReport = {
    ...summary,
    work: totals,
    durationMs,
    linksPerSecond: durationMs > 0 ? Math.round((totals.scanned * 1000) / durationMs) : 0,
  };
  await recordOpsRunFinished({ workflowId, status: 'succeeded', report });
  log.info('re-scan finished', report);
  return report;
}
