import { recordDailyClicksEvent } from '../lib/webhooks/daily_clicks_event.ts';
import { deliverWebhooks } from '../lib/webhooks/deliver_webhooks.ts';
import type { ActivityDeps } from './deps.ts';
import { runStep, withKeepAlive } from './task_context.ts';

/** How often the drainer's step heartbeats while it runs (the workflow's heartbeat timeout is 10 s). */
const KEEP_ALIVE_MS = 2_000;

/** Outgoing webhooks (lib/webhooks, ADR 0082): the drainer's step, and the daily clicks event. */
export function createWebhookActivities(deps: ActivityDeps) {
  return {
    deliverWebhooks: (_input: Record<string, never>) =>
      runStep(() => withKeepAlive(KEEP_ALIVE_MS, (context) => deliverWebhooks(deps.webhooks, context))),
    recordDailyClicksEvent: (input: { date?: string }) =>
      runStep(() => recordDailyClicksEvent({ sql: deps.sql }, input)),
  };
}
