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
 * One batch of aggregates as the click_counts statement takes it: a jsonb array of
 * `[code, hour_ms, kind, country, referrer_host, clicks, last_ms | null]`, in key order, each key once.
 */
export interface EncodedClickCounts {
  json: string;
  /** Distinct keys in the batch (after merging). */
  keys: number;
  /** Clicks in the batch. */
  clicks: number;
  /** The batch's readers' clicks by browser and OS family (encodeFamilyCounts); absent: none. */
  families?: string;
}

/** Readers' clicks of one (code, UTC day, browser family, OS family), as the click buffer flushes them. */
export interface FamilyCountRow {
  code: string;
  /** YYYY-MM-DD (UTC). */
  day: string;
  browser: string;
  os: string;
  clicks: number;
}

/**
 * A batch's family counts as the click statement takes them (a jsonb array of `[code, day, browser, os, clicks]`),
 * in key order so concurrent flushes lock rows in the same order; each key at most once (the caller sums them).
 */
export function encodeFamilyCounts(rows: FamilyCountRow[]): string {
  rows.sort(
    (a, b) => cmp(a.code, b.code) || cmp(a.day, b.day) || cmp(a.browser, b.browser) || cmp(a.os, b.os),
  );
  const parts: string[] = ['['];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    parts.push(
      `${i > 0 ? ',' : ''}[${JSON.stringify(r.code)},"${r.day}",${JSON.stringify(r.browser)},${JSON.stringify(r.os)},${r.clicks}]`,
    );
  }
  parts.push(']');
  return parts.join('');
}

/**
 * Encodes a batch for addEncodedClickCounts, SORTING `rows` IN PLACE (the caller's own array). Rows go in key order
 * so concurrent flushes from several instances take row locks in the same order; rows of one key (two cells of a
 * code may each count it) become one, since a statement must not upsert a row twice. The text is built straight
 * from the rows, with no object per row: a batch's parameter lives until its statement returns (tens of
 * milliseconds under load), across scavenges, and what it holds is promoted to the old generation. Measured with
 * `BENCH_PROFILER=promoted` on the Postgres path (one row per request): the flush promoted 549 B per request with
 * rows copied into jsonb input objects, a sorted copy and postgres.js's JSON serialisation, 389 B built this way.
 * Times are epoch milliseconds (numbers: no Date or ISO string per row).
 */
export function encodeClickCounts(rows: ClickCountRow[]): EncodedClickCounts {
  rows.sort(compareRows);
  // Row strings joined once: Array#join makes one flat string, where `json += row` would keep a rope of cons
  // strings alive for as long as the statement waits for a connection (measured: ~530 B per row promoted).
  const parts: string[] = ['['];
  let keys = 0;
  let clicks = 0;
  const n = rows.length;
  for (let i = 0; i < n; ) {
    const first = rows[i]!;
    let sum = first.clicks;
    let lastMs = first.moveLastClick !== false ? first.lastClickMs : -1;
    let j = i + 1;
    for (; j < n; j++) {
      const r = rows[j]!;
      if (compareRows(first, r) !== 0) break;
      sum += r.clicks;
      if (r.moveLastClick !== false && r.lastClickMs > lastMs) lastMs = r.lastClickMs;
    }
    parts.push(
      `${keys > 0 ? ',' : ''}[${JSON.stringify(first.code)},${first.hourMs},"${first.kind}",${JSON.stringify(first.country)},${JSON.stringify(first.referrerHost)},${sum},${lastMs < 0 ? 'null' : lastMs}]`,
    );
    keys++;
    clicks += sum;
    i = j;
  }
  parts.push(']');
  return { json: parts.join(''), keys, clicks };
}

/**
 * Adds one batch of aggregates to click_counts (see addEncodedClickCounts); `rows` are copied, not reordered.
 * Returns false when the batch id was already counted.
 */
export function addClickCounts(db: Db, batchId: string, rows: readonly ClickCountRow[]): Promise<boolean> {
  if (rows.length === 0) return Promise.resolve(true);
  return addEncodedClickCounts(db, batchId, encodeClickCounts([...rows]));
}

/**
 * Adds one encoded batch to click_counts (and its family counts to click_families) with a multi-row upsert and moves the codes' link_last_clicks
 * forward (to within LAST_CLICK_PRECISION_MINUTES), in ONE statement (data-modifying CTEs): atomic without an
 * explicit transaction. `batchId` makes it idempotent: a batch whose id is already in click_flush_batches changes
 * nothing, so a flush that lost its connection at commit time can retry the same batch without counting twice;
 * returns false for such a replay. Deliberately not sql.begin(): postgres.js 3.4.9 can throw an uncatchable
 * TypeError (`socket.write` on a closed connection, porsager/postgres#1154, #1208) when a connection dies inside a
 * transaction, which would take the web process down during a database outage.
 */
export async function addEncodedClickCounts(
  db: Db,
  batchId: string,
  batch: EncodedClickCounts,
): Promise<boolean> {
  if (batch.keys === 0) return true;
  // One jsonb parameter rather than parallel arrays: postgres.js 3.4.9 mis-serialises a one-element array
  // parameter on a statement's first (unprepared) run ("malformed array literal"). It goes as text (`::text`):
  // a parameter described as jsonb would be JSON.stringify'd once more, into one JSON string.
  const [result] = await db<{ counted: boolean }[]>`
    WITH claim AS (
      INSERT INTO click_flush_batches (id) VALUES (${batchId}) ON CONFLICT (id) DO NOTHING RETURNING id
    ), pruned AS (
      DELETE FROM click_flush_batches WHERE id IN (
        SELECT id FROM click_flush_batches WHERE flushed_at < now() - ${BATCH_ID_RETENTION}::interval LIMIT 1000)
    ), input AS (
      SELECT e->>0 AS code, to_timestamp((e->>1)::bigint / 1000.0) AS hour, e->>2 AS kind, e->>3 AS country,
             e->>4 AS referrer_host, (e->>5)::bigint AS clicks, to_timestamp((e->>6)::bigint / 1000.0) AS last_at
      FROM jsonb_array_elements(${batch.json}::text::jsonb) AS e
      WHERE EXISTS (SELECT 1 FROM claim)
    ), counted AS (
      INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks)
      SELECT code, hour, kind, country, referrer_host, clicks FROM input
      ON CONFLICT (code, hour, kind, country, referrer_host)
      DO UPDATE SET clicks = click_counts.clicks + EXCLUDED.clicks
    )
    , families AS (
      INSERT INTO click_families (code, day, browser, os, clicks)
      SELECT e->>0, (e->>1)::date, e->>2, e->>3, (e->>4)::bigint
      FROM jsonb_array_elements(${batch.families ?? '[]'}::text::jsonb) AS e
      WHERE EXISTS (SELECT 1 FROM claim)
      ON CONFLICT (code, day, browser, os) DO UPDATE SET clicks = click_families.clicks + EXCLUDED.clicks
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
