import type { ClickKind } from './click_stats_store.ts';
import type { Db, Sql } from './sql.ts';

/** Clicks of one (code, hour, kind, country, referrer host) aggregate, as the click buffer flushes them. */
export interface ClickCountRow {
  code: string;
  /** Start of the UTC hour, epoch ms. */
  hourMs: number;
  kind: ClickKind;
  /** ISO 3166 alpha-2 country, '' when unknown. */
  country: string;
  /** Lower-cased referrer host, '' when none. */
  referrerHost: string;
  clicks: number;
  /** The latest click of the aggregate, epoch ms (for links.last_clicked_at). */
  lastClickMs: number;
}

/**
 * Adds many aggregates to click_counts with one multi-row upsert, and moves links.last_clicked_at forward,
 * in one transaction (all or nothing, so a failed flush can be retried without counting twice). Rows are
 * written in key order so concurrent flushes from several web instances cannot deadlock.
 */
export async function addClickCounts(sql: Sql, rows: readonly ClickCountRow[]): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort(compareRows);
  const lastByCode = new Map<string, number>();
  for (const r of sorted) lastByCode.set(r.code, Math.max(lastByCode.get(r.code) ?? 0, r.lastClickMs));
  const codes = [...lastByCode.keys()].sort();
  await sql.begin(async (tx) => {
    await upsertClickCounts(tx, sorted);
    await tx`
      UPDATE links AS l SET last_clicked_at = t.at
      FROM unnest(${tx.array(codes)}::text[], ${tx.array(codes.map((c) => new Date(lastByCode.get(c)!).toISOString()))}::timestamptz[]) AS t(code, at)
      WHERE l.code = t.code COLLATE "C" AND (l.last_clicked_at IS NULL OR l.last_clicked_at < t.at)`;
  });
}

async function upsertClickCounts(db: Db, rows: readonly ClickCountRow[]): Promise<void> {
  await db`
    INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks)
    SELECT * FROM unnest(
      ${db.array(rows.map((r) => r.code))}::text[],
      ${db.array(rows.map((r) => new Date(r.hourMs).toISOString()))}::timestamptz[],
      ${db.array(rows.map((r) => r.kind))}::text[],
      ${db.array(rows.map((r) => r.country))}::text[],
      ${db.array(rows.map((r) => r.referrerHost))}::text[],
      ${db.array(rows.map((r) => String(r.clicks)))}::bigint[]
    )
    ON CONFLICT (code, hour, kind, country, referrer_host)
    DO UPDATE SET clicks = click_counts.clicks + EXCLUDED.clicks`;
}

function compareRows(a: ClickCountRow, b: ClickCountRow): number {
  return (
    cmp(a.code, b.code) ||
    a.hourMs - b.hourMs ||
    cmp(a.kind, b.kind) ||
    cmp(a.country, b.country) ||
    cmp(a.referrerHost, b.referrerHost)
  );
}

// Byte order, as Postgres's "C" collation compares the code column.
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
