import {
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import { type BackfillPostsInput, type BackfillReport, backfillBatchSignal } from './contract.ts';

/** A run with no batch for this long ends; its next batch starts it again (same workflow ID). */
const IDLE_MS = 24 * 3600_000;

const { propagateBackfill } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  // A worker that dies mid-chunk is noticed within this; the retry finds the rows still unmarked.
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});
const { finishBackfill } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/**
 * One archive backfill run (`backfill:{site}:{run}`), fed by the bulk endpoint's signals. The endpoint has
 * already decided and written each batch (links, answers, and the new links' rows in link_sync_queue) before
 * its 202; this workflow wakes the sync-queue drainer (ADR 0024), which takes them to the serving store and
 * Bitly in batches, and queues rows written before that queue existed (backfill_posts.propagated). Postgres is
 * the queue, so a lost signal or a crash anywhere repeats at most a chunk. When the final batch is in and everything propagated, the run is closed and the site's WordPress
 * reconciliation runs once (it heals links the backfill kept, WordPress winning).
 */
export async function backfillPostsWorkflow(
  input: BackfillPostsInput,
): Promise<BackfillReport | { idle: true }> {
  let wake = true;
  let finalSeen = input.finalSeen ?? false;
  setHandler(backfillBatchSignal, (batch) => {
    wake = true;
    if (batch.final) finalSeen = true;
  });
  const target = { site: input.site, runId: input.runId };
  for (;;) {
    if (!wake && !(await condition(() => wake, IDLE_MS))) {
      // Idle for a day: a last look, then end without closing the run (the plugin may resume it later).
      const last = await propagateBackfill(target);
      if (last.finalReceived && last.remaining === 0) break;
      return { idle: true };
    }
    wake = false;
    const step = await propagateBackfill(target);
    if (step.finalReceived) finalSeen = true;
    if (finalSeen && step.remaining === 0 && !wake) break;
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof backfillPostsWorkflow>({ ...input, finalSeen });
    }
  }
  return finishBackfill(target);
}
