import { recordDailyClicksEvent } from '../lib/webhooks/daily_clicks_event.ts';
import { deliverWebhooks } from '../lib/webhooks/deliver_webhooks.ts';
import type { ActivityDeps } from './deps.ts';
import { currentTaskContext, runStep } from './task_context.ts';

/** Outgoing webhooks (lib/webhooks, ADR 0082): the drainer's step, and the daily clicks event. */
export function createWebhookActivities(deps: ActivityDeps) {
  return {
    deliverWebhooks: (_input: Record<string, never>) =>
      runStep(() => deliverWebhooks(deps.webhooks, currentTaskContext())),
    recordDailyClicksEvent: (input: { date?: string }) =>
      runStep(() => recordDailyClicksEvent({ sql: deps.sql }, input)),
  };
}
