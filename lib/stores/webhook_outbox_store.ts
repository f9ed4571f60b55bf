// The outbox of outgoing webhooks (migrations/0110_outgoing_webhooks.sql, ADR 0082): where a fact changes, one
// call writes a message per subscribed endpoint inside the caller's transaction, so an event is delivered if
// and only if its change committed, whatever process dies afterwards. Delivery is lib/webhooks'.
import type { LinkRow } from './link_rows.ts';
import type { Db } from './sql.ts';

/** Every event type an endpoint may subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'link.created',
  'link.updated',
  'link.deleted',
  'link.expired',
  'link.blocked',
  'report.opened',
  'clicks.daily',
  'destination.dead',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** One event: its `data` (what the receiver gets under `data`), and a key when it must go only once. */
export interface WebhookEvent {
  data: Record<string, unknown>;
  dedupeKey?: string;
}

/**
 * Writes one message per (event, enabled endpoint subscribed to `type`), inside the caller's transaction. No
 * endpoint subscribed: nothing is written (one indexless read of a small table). A message whose dedupe key the
 * endpoint already has is skipped. Returns how many messages were written.
 */
export async function recordWebhookEvents(
  db: Db,
  type: WebhookEventType,
  events: readonly WebhookEvent[],
): Promise<number> {
  if (events.length === 0) return 0;
  const rows = events.map((e) => ({ data: e.data, dedupe_key: e.dedupeKey ?? null }));
  const written = await db`
    INSERT INTO webhook_messages (id, endpoint_id, event_type, payload, dedupe_key)
    SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.id, ${type}::text, ev.data, ev.dedupe_key
    FROM webhook_endpoints AS e,
         jsonb_to_recordset((${JSON.stringify(rows)}::text)::jsonb) AS ev(data jsonb, dedupe_key text)
    WHERE e.enabled AND ${type}::text = ANY (e.event_types)
    ON CONFLICT DO NOTHING`;
  return written.count;
}

/** One event: recordWebhookEvents for a single `data`. */
export function recordWebhookEvent(
  db: Db,
  type: WebhookEventType,
  data: Record<string, unknown>,
): Promise<number> {
  return recordWebhookEvents(db, type, [{ data }]);
}

/** What link events carry about the link: who it is and where it points, never its owner's identity. */
export function linkEventData(
  link: Pick<LinkRow, 'code' | 'targetUrl' | 'title' | 'status' | 'safety' | 'version'>,
): Record<string, unknown> {
  return {
    code: link.code,
    url: link.targetUrl,
    title: link.title,
    status: link.status,
    safety: link.safety,
    version: link.version,
  };
}

/** One UTC day's clicks: the total by kind and the busiest links (human clicks). */
export interface DailyClicksSummary {
  date: string;
  total: number;
  byKind: Record<string, number>;
  top: { code: string; clicks: number }[];
}

/** Sums click_counts over one UTC day (`date`: YYYY-MM-DD), with the `top` busiest links. */
export async function summarizeDailyClicks(db: Db, date: string, top: number): Promise<DailyClicksSummary> {
  const from = `${date}T00:00:00Z`;
  const kinds = await db<{ kind: string; clicks: string }[]>`
    SELECT kind, sum(clicks)::text AS clicks FROM click_counts
    WHERE hour >= ${from}::timestamptz AND hour < ${from}::timestamptz + interval '1 day'
    GROUP BY kind`;
  const busiest = await db<{ code: string; clicks: string }[]>`
    SELECT code, sum(clicks)::text AS clicks FROM click_counts
    WHERE hour >= ${from}::timestamptz AND hour < ${from}::timestamptz + interval '1 day' AND kind = 'human'
    GROUP BY code ORDER BY sum(clicks) DESC, code LIMIT ${top}`;
  const byKind = Object.fromEntries(kinds.map((k) => [k.kind, Number(k.clicks)]));
  return {
    date,
    total: Object.values(byKind).reduce((a, b) => a + b, 0),
    byKind,
    top: busiest.map((b) => ({ code: b.code, clicks: Number(b.clicks) })),
  };
}
