import type { ClickKind } from './click_stats_store.ts';
import type { Db } from './sql.ts';

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
  /** The latest click of the aggregate, epoch ms (for link_last_clicks). */
  lastClickMs: number;
  /**
   * Whether this row may move the code's last click time (default true). The click buffer says no for a code it
   * asked to move less than LAST_CLICK_PRECISION_MINUTES ago: even a lookup that changes nothing costs
   * (measured: 80 ms of the ~200 ms a batch of 10,000 aggregates took).
   */
  moveLastClick?: boolean;
}

/**
 * A code's last click time (link_last_clicks) moves forward only when it is at least this far behind the batch's
 * latest click. It orders the safety re-scan (recently clicked links first), which needs no finer grain, and each
 * move is a non-HOT update (the column is indexed). The time lived in `links` until migration 0071, where a move
 * touched every index of the table (three trigram GIN indexes among them): 10,000 clicked codes per flush cost
 * Postgres 2.2–3.7 s with every flush moving it, 0.2–0.36 s with this precision (ADR 0026).
 */
export const LAST_CLICK_PRECISION_MINUTES = 10;
/** How long a flushed batch's id is remembered (a retry comes within seconds or minutes). */
const BATCH_ID_RETENTION = '1 day';

/**
 * Adds one batch of aggregates to click_counts with a multi-row upsert and moves the codes' link_last_clicks
 * forward (to within LAST_CLICK_PRECISION_MINUTES), in ONE statement (data-modifying CTEs): atomic without an explicit transaction. `batchId` makes
 * it idempotent: a batch whose id is already in click_flush_batches changes nothing, so a flush that lost its
 * connection at commit time can retry the same batch without counting twice; returns false for such a
 * replay. Deliberately not sql.begin(): postgres.js 3.4.9 can throw an uncatchable TypeError (`socket.write` on a closed connection, porsager/postgres#1154, #1208) when a connection dies
 * inside a transaction, which would take the web process down during a database outage. Rows go in key
 * order so concurrent flushes from several instances take row locks in the same order.
 */
export async function addClickCounts(
  db: Db,
  batchId: string,
  rows: readonly ClickCountRow[],
): Promise<boolean> {
  if (rows.length === 0) return true;
  const sorted = [...rows].sort(compareRows);
  // One jsonb parameter rather than parallel arrays: postgres.js 3.4.9 mis-serialises a one-element array
  // parameter on a statement's first (unprepared) run ("malformed array literal").
  // Times go as epoch milliseconds (numbers: no Date or ISO string per row) and become timestamptz in SQL.
  // Rows of one key (two cells of a code may each count it) become one: a statement must not upsert a row twice.
  const input: ClickCountInput[] = [];
  let last: ClickCountRow | undefined;
  for (const r of sorted) {
    const moves = r.moveLastClick !== false;
    if (last !== undefined && compareRows(last, r) === 0) {
      const merged = input[input.length - 1]!;
      merged.clicks += r.clicks;
      if (moves && (merged.last_ms === null || r.lastClickMs > merged.last_ms))
        merged.last_ms = r.lastClickMs;
      continue;
    }
    last = r;
    input.push({
      code: r.code,
      hour_ms: r.hourMs,
      kind: r.kind,
      country: r.country,
      referrer_host: r.referrerHost,
      clicks: r.clicks,
      last_ms: moves ? r.lastClickMs : null,
    });
  }
  const [result] = await db<{ counted: boolean }[]>`
    WITH claim AS (
      INSERT INTO click_flush_batches (id) VALUES (${batchId}) ON CONFLICT (id) DO NOTHING RETURNING id
    ), pruned AS (
      DELETE FROM click_flush_batches WHERE id IN (
        SELECT id FROM click_flush_batches WHERE flushed_at < now() - ${BATCH_ID_RETENTION}::interval LIMIT 1000)
    ), input AS (
      SELECT code, to_timestamp(hour_ms / 1000.0) AS hour, kind, country, referrer_host, clicks,
             to_timestamp(last_ms / 1000.0) AS last_at
      FROM jsonb_to_recordset(${db.json(input)}::jsonb)
        AS t(code text, hour_ms bigint, kind text, country text, referrer_host text, clicks bigint, last_ms bigint)
      WHERE EXISTS (SELECT 1 FROM claim)
    ), counted AS (
      INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks)
      SELECT code, hour, kind, country, referrer_host, clicks FROM input
      ON CONFLICT (code, hour, kind, country, referrer_host)
      DO UPDATE SET clicks = click_counts.clicks + EXCLUDED.clicks
    )
    , touched AS (
      INSERT INTO link_last_clicks AS c (code, last_clicked_at)
      SELECT code, max(last_at) FROM input WHERE last_at IS NOT NULL GROUP BY code ORDER BY code
      ON CONFLICT (code) DO UPDATE SET last_clicked_at = EXCLUDED.last_clicked_at
      WHERE c.last_clicked_at <= EXCLUDED.last_clicked_at - make_interval(mins => ${LAST_CLICK_PRECISION_MINUTES})
    )
    SELECT EXISTS (SELECT 1 FROM claim) AS counted`;
  return result?.counted ?? false;
}

/** One row of the statement's jsonb input (a type, not an interface: postgres.js's JSONValue wants an index signature). */
type ClickCountInput = {
  code: string;
  hour_ms: number;
  kind: string;
  country: string;
  referrer_host: string;
  clicks: number;
  last_ms: number | null;
};

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
