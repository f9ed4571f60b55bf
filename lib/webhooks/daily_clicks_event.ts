// The `clicks.daily` event (activity `recordDailyClicksEvent`, on the Schedule `webhook-clicks-daily:{taskQueue}`):
// yesterday's clicks (UTC) summed once and written to the outbox under the day as its dedupe key, so a second
// run of the Schedule, or a retried activity, sends nothing twice.
import type { Sql } from '../stores/sql.ts';
import { recordWebhookEvents, summarizeDailyClicks } from '../stores/webhook_outbox_store.ts';

/** The busiest links a summary names. */
const TOP_LINKS = 20;

export async function recordDailyClicksEvent(
  deps: { sql: Sql; now?: () => Date },
  input: { date?: string } = {},
): Promise<{ date: string; messages: number }> {
  const now = deps.now?.() ?? new Date();
  const date = input.date ?? new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
  const summary = await summarizeDailyClicks(deps.sql, date, TOP_LINKS);
  const messages = await recordWebhookEvents(deps.sql, 'clicks.daily', [
    { data: { ...summary }, dedupeKey: `clicks.daily:${date}` },
  ]);
  return { date, messages };
}
