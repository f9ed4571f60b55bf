import { continueAsNew, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { ArchiveQueueInput, ArchiveQueueTotals } from './contract.ts';

/** Codes taken per read of the queue (each is then moved one step; a pause re-reads). */
const BATCH_SIZE = 20;
/** Steps per run before continuing as new (each is two events in this history). */
const STEPS_PER_RUN = 500;
/** Rows due within this long are waited for here; later ones are left to the Schedule's next run. */
const MAX_IDLE_WAIT_MS = 60_000;

const { takeArchiveBatch } = proxyActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});
// The Archive's own failures are recorded on the row by the step (and waited out below); what is thrown here is
// ours (Postgres gone), retried.
const { archiveQueuedStep } = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/**
 * The drainer of archive_queue (ADR 0076), started by the `archive-queue:{taskQueue}` Schedule every minute while
 * ARCHIVE_MODE is not off (never two runs at once). Takes the due rows and moves each one step (decide, capture,
 * poll, look up), sleeping 60 s / ARCHIVE_RATE after every capture or lookup it asked of the Archive, and the
 * Retry-After (or backoff) the Archive asked for after a 429 or an outage before taking more. Ends when nothing is
 * due within a minute; the Schedule's next run takes what comes later.
 */
export async function archiveQueueWorkflow(input: ArchiveQueueInput = {}): Promise<ArchiveQueueTotals> {
  const totals: ArchiveQueueTotals = input.totals ?? { steps: 0, byOutcome: {}, pauses: 0 };
  let steps = 0;
  for (;;) {
    const batch = await takeArchiveBatch({ limit: BATCH_SIZE });
    if (batch.codes.length === 0) {
      if (batch.nextDueInMs === null || batch.nextDueInMs > MAX_IDLE_WAIT_MS) break;
      await sleep(Math.max(batch.nextDueInMs, 100));
      continue;
    }
    for (const code of batch.codes) {
      const step = await archiveQueuedStep({ code });
      steps++;
      totals.steps++;
      totals.byOutcome[step.outcome] = (totals.byOutcome[step.outcome] ?? 0) + 1;
      if (step.pauseMs !== undefined) {
        // The Archive asked everyone to wait (or is down): the rest of the batch waits too, and is read again.
        totals.pauses++;
        await sleep(Math.max(step.pauseMs, batch.intervalMs));
        break;
      }
      if (step.asked) await sleep(batch.intervalMs);
    }
    if (steps >= STEPS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof archiveQueueWorkflow>({ ...input, totals });
    }
  }
  return totals;
}
