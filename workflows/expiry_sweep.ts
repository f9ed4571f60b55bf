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
  type ExpirySweepInput,
  type ExpirySweepTotals,
  expiryMovedSignal,
  expirySweepQuery,
} from './contract.ts';

/** The longest sleep: the sweeper looks at Postgres at least this often, whatever signals were lost. */
const MAX_SLEEP_MS = 60 * 60_000;
/**
 * The pause after a sweep that was not full while due links remain: rows an edit held (skipped, not waited for)
 * or a Postgres clock a little behind this one. Short, so they are late by about this much at most.
 */
const RETRY_PAUSE_MS = 500;
/** Sweeps per run before continuing as new (each is an activity and a timer in this history). */
const SWEEPS_PER_RUN = 500;

// One transaction of at most EXPIRY_BATCH_SIZE links: quick. A worker lost during it is noticed within the
// heartbeat timeout; the transaction it held rolled back, so the retry expires the same links once.
const { expireDueLinks } = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/**
 * The one expiry sweeper of a deployment (`expiry-sweep:{taskQueue}`, ADR 0091). Postgres decides: each sweep
 * expires up to EXPIRY_BATCH_SIZE due links in one transaction (audited, webhook events, queued for the sync
 * drainer) and reads the next due date. A full sweep looks again at once; otherwise the sweeper sleeps until that
 * date (at most an hour), or earlier when an `expiryMoved` signal names an earlier one. Signals come from every
 * propagation pass of a link with an expiry (one per batch from the sync-queue drainer) and start the sweeper if
 * none runs (signalWithStart), as does the worker's start. Nothing per link is kept here.
 */
export async function expirySweepWorkflow(input: ExpirySweepInput): Promise<ExpirySweepTotals> {
  const totals: ExpirySweepTotals = input.totals ?? { batches: 0, expired: 0 };
  /** The earliest date signalled since the current sweep began (its read of Postgres may have missed it). */
  let signalled: number | null = null;
  /** When the sweeper looks next (null: it is sweeping). */
  let wakeAtMs: number | null = null;
  let moved = false;
  setHandler(expiryMovedSignal, ({ expiresAtMs }) => {
    if (signalled === null || expiresAtMs < signalled) signalled = expiresAtMs;
    if (wakeAtMs !== null && expiresAtMs < wakeAtMs) {
      wakeAtMs = expiresAtMs;
      moved = true;
    }
  });
  setHandler(expirySweepQuery, () => ({ wakeAtMs, totals }));

  let sweeps = 0;
  for (;;) {
    // A link signalled before this point was committed before its signal: the sweep's read sees it.
    signalled = null;
    wakeAtMs = null;
    const step = await expireDueLinks({});
    sweeps++;
    if (step.expired > 0) {
      totals.batches++;
      totals.expired += step.expired;
    }
    if (step.expired < step.batchSize) {
      const now = Date.now();
      let next = now + MAX_SLEEP_MS;
      if (step.nextDueInMs !== null)
        next = Math.min(next, now + (step.nextDueInMs > 0 ? step.nextDueInMs : RETRY_PAUSE_MS));
      if (signalled !== null) next = Math.min(next, signalled);
      wakeAtMs = next;
      // Every signal is an event here: a flood of them during a long sleep (many single edits of links with
      // an expiry) ends the sleep for a continue-as-new rather than growing this history to its limit.
      const tooLong = () => workflowInfo().continueAsNewSuggested;
      while (wakeAtMs > Date.now() && !tooLong()) {
        moved = false;
        await condition(() => moved || tooLong(), Math.max(wakeAtMs - Date.now(), 1));
      }
    }
    if (sweeps >= SWEEPS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      // The new run sweeps first: nothing but the totals to carry.
      await continueAsNew<typeof expirySweepWorkflow>({ reason: input.reason, totals });
    }
  }
}
