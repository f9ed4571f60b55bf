import {
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import { type SyncQueueInput, type SyncQueueTotals, syncQueuedSignal } from './contract.ts';

/** An empty queue is watched this long for more before the drainer ends (the next kick starts it again). */
const LINGER_MS = 10_000;
/** Batches per run before continuing as new (each batch's codes are in its history: keep it short). */
const BATCHES_PER_RUN = 100;
/** The longest wait for Bitly after outages that failed whole batches (doubling from the first wait). */
const OUTAGE_PAUSE_MAX_MS = 5 * 60_000;

// A read of the queue: quick, so a worker lost during it is noticed soon.
const { takeSyncBatch } = proxyActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

// A worker that dies mid-batch is noticed within the heartbeat timeout; the retry re-reads the queue and redoes
// only the codes still in it (a row leaves only after its sync is done). Failures of single links are handled
// inside the activity; what is thrown (the serving store down, Postgres gone) is the whole batch's, retried.
const { syncLinkBatch } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/**
 * The one drainer of link_sync_queue (`sync-queue:{taskQueue}`, ADR 0024), started and woken by
 * signalWithStart whenever a bulk change queued codes. It takes the due codes in batches (SYNC_BATCH_SIZE; each
 * batch's codes are in this history, in the take's result and the sync's input) and syncs each batch as the
 * per-link `sync:{code}` workflow syncs one link. When Bitly asks to wait (rate limit) or fails every link of a
 * batch (outage), the whole queue waits on a durable timer. An empty queue ends the run after a short linger.
 */
export async function syncQueueWorkflow(input: SyncQueueInput): Promise<SyncQueueTotals> {
  let wake = false;
  setHandler(syncQueuedSignal, () => {
    wake = true;
  });
  const totals: SyncQueueTotals = input.totals ?? {
    batches: 0,
    synced: 0,
    handedOff: 0,
    collisions: 0,
    pauses: 0,
  };
  let outages = 0;
  let batchesThisRun = 0;
  for (;;) {
    wake = false;
    const next = await takeSyncBatch({});
    if (next.codes.length === 0) {
      if (next.nextDueInMs === null) {
        // Empty: linger for more, then end. `|| wake`: a kick delivered with the timer's end still counts.
        if ((await condition(() => wake, LINGER_MS)) || wake) continue;
        break;
      }
      // Only codes backing off: wait until the first is due, or for a kick.
      await condition(() => wake, Math.max(next.nextDueInMs, 100));
      continue;
    }
    const report = await syncLinkBatch({ codes: next.codes });
    batchesThisRun++;
    totals.batches++;
    totals.synced += report.synced;
    totals.handedOff += report.handedOff.length;
    totals.collisions += report.collisions.length;
    if (report.pause) {
      totals.pauses++;
      const ms =
        report.pause.why === 'vendor-unavailable'
          ? Math.min(report.pause.ms * 2 ** outages++, OUTAGE_PAUSE_MAX_MS)
          : report.pause.ms;
      await sleep(Math.max(ms, 100));
    } else {
      outages = 0;
    }
    if (batchesThisRun >= BATCHES_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof syncQueueWorkflow>({ reason: input.reason, totals });
    }
  }
  return totals;
}
