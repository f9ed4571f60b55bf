import {
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import { type DeliverWebhooksInput, type DeliverWebhooksTotals, webhooksDueSignal } from './contract.ts';

/** Steps per run before continuing as new (an idle poll is a step too: keep the history short). */
const STEPS_PER_RUN = 200;

// One step sends at most a batch, each request bounded by WEBHOOK_TIMEOUT_MS, and heartbeats every 2 s while it
// runs. A step lost with its worker (killed, or handed to a poll the worker dropped as it shut down) is noticed
// within the heartbeat timeout, and the retry takes what is due again (the lost step's messages are leased until
// their lease ends, then due again). Failures of single messages are decided inside the step.
const { deliverWebhooks } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

const { recordDailyClicksEvent } = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '5m' },
});

/**
 * The one drainer of the outgoing-webhook outbox (`webhooks:{taskQueue}`, ADR 0082). Retries, backoff, 429
 * pauses and dead-lettering are the messages' own state in Postgres, so this workflow only paces: a step while
 * messages are due, a durable sleep until the next one is (or the poll interval, for messages written since),
 * a signal to look at once. Thousands of events (a mass retarget) are batches of one workflow, never a
 * workflow each. It ends when no endpoint is enabled and nothing waits.
 */
export async function deliverWebhooksWorkflow(input: DeliverWebhooksInput): Promise<DeliverWebhooksTotals> {
  let wake = false;
  setHandler(webhooksDueSignal, () => {
    wake = true;
  });
  const totals: DeliverWebhooksTotals = input.totals ?? {
    batches: 0,
    delivered: 0,
    retried: 0,
    failed: 0,
    dead: 0,
  };
  for (let step = 1; ; step++) {
    wake = false;
    const report = await deliverWebhooks({});
    if (report.claimed > 0) totals.batches++;
    totals.delivered += report.delivered;
    totals.retried += report.retrying;
    totals.failed += report.failed;
    totals.dead += report.dead;
    if (!report.more) {
      if (report.enabledEndpoints === 0 && report.nextDueInMs === null && !wake) break;
      const waitMs = Math.min(report.nextDueInMs ?? input.pollIntervalMs, input.pollIntervalMs);
      await condition(() => wake, Math.max(waitMs, 100));
    }
    if (step >= STEPS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof deliverWebhooksWorkflow>({ ...input, totals });
    }
  }
  return totals;
}

/** The `clicks.daily` Schedule's run: yesterday's summary into the outbox (once per day and endpoint). */
export async function dailyClicksWebhookWorkflow(): Promise<{ date: string; messages: number }> {
  return recordDailyClicksEvent({});
}
