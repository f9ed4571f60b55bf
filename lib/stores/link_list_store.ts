import type { LinkOrigin, LinkRow, LinkStatus, SafetyVerdict } from './link_rows.ts';
import { LINK_COLUMNS } from './link_store.ts';
import { PROBE_CANARY_OWNER } from './probe_store.ts';
import type { Db, SqlFragment } from './sql.ts';

/** Filters of a link listing; all optional, combined with AND. Deleted links are never listed. */
export interface LinkListFilter {
  /**
   * Substring of the code or the target URL (case-insensitive), or of the title or the percent-decoded URL
   * (folded: migrations/0050_links_title_search.sql), or an exact tag.
   */
  q?: string;
  status?: LinkStatus;
  /** The stored short domain ('' the default; migrations/0100_links_short_domain.sql). */
  domain?: string;
  safety?: SafetyVerdict;
  origin?: LinkOrigin;
  tag?: string;
  site?: string;
}

/** Orders a listing can take; each is a total order (the code breaks ties) so keyset paging is exact. */
export const LINK_SORTS = ['newest', 'oldest', 'updated', 'code', 'clicks'] as const;
export type LinkSort = (typeof LINK_SORTS)[number];

/** Where a page starts: strictly after (or before) the row with this sort value and code. */
export interface LinkListPosition {
  /** The sort column's value as Postgres text (timestamps keep their microseconds), or the code. */
  value: string;
  code: string;
  direction: 'after' | 'before';
}

/** Readers' clicks (human and QR) of each code, from link_click_totals; a code never clicked is absent. */
export async function listClickTotals(db: Db, codes: readonly string[]): Promise<Map<string, number>> {
  if (codes.length === 0) return new Map();
  const rows = await db<{ code: string; clicks: number }[]>`
    SELECT t.code, t.clicks FROM unnest(${db.array([...codes])}::text[]) AS c(code)
    JOIN link_click_totals AS t ON t.code = c.code COLLATE "C"`;
  return new Map(rows.map((r) => [r.code, r.clicks]));
}

/** A listed row with its sort value as exact text, for the next cursor. */
export type ListedLinkRow = LinkRow & { sortValue: string };

const SORT_SQL: Record<LinkSort, { column: string; descending: boolean }> = {
  newest: { column: 'created_at', descending: true },
  oldest: { column: 'created_at', descending: false },
  updated: { column: 'updated_at', descending: true },
  code: { column: 'code', descending: false },
  // Readers' clicks (link_click_totals, ADR 0087; listLinksByClicks): a link never clicked counts 0.
  clicks: { column: 'clicks', descending: true },
};

/**
 * Above this many estimated matches a search walks the sort order (it finds a page of matches quickly);
 * below it, it gathers the matches through the indexes (a walk would read most of the table to find a
 * rare one). Measured at 100,000 links: a walk for a one-in-100,000 term took ~430 ms, the index path
 * ~10-40 ms; for a term in every fifth link the walk took <1 ms and the index path ~250 ms
 * (docs/API_BENCHMARKS.md).
 */
const SEARCH_INDEX_PATH_MAX_ROWS = 2000;

/** The planner's estimate of how many rows a search matches (EXPLAIN only: nothing is executed). */
async function estimateSearchMatches(db: Db, pattern: string, q: string): Promise<number> {
  const [row] = await db<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }[]>`
    EXPLAIN (FORMAT JSON)
    SELECT code FROM links WHERE lower(code) LIKE lower(${pattern})
    UNION ALL SELECT code FROM links WHERE target_url ILIKE ${pattern}
    UNION ALL SELECT code FROM links WHERE search_text LIKE lifeline_search_pattern(${q})
    UNION ALL SELECT code FROM links WHERE tags @> ${db.array([q])}::text[]`;
  return row?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? Number.POSITIVE_INFINITY;
}

/** Escapes LIKE wildcards so a search for "50%_off" matches those characters literally. */
function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

/**
 * The WHERE conditions of a listing's filter (deleted links and the prober's canary never match): a page of the
 * list, a bulk change's count and its selection read the same links.
 */
export async function linkFilterConditions(db: Db, filter: LinkListFilter): Promise<SqlFragment[]> {
  // The prober's canary (lib/prober/probe_canary.ts) is Lifeline's own, not an editor's link: never listed.
  const conditions = [db`deleted_at IS NULL`, db`owner <> ${PROBE_CANARY_OWNER}`];
  if (filter.q) {
    const pattern = likePattern(filter.q);
    const tag = db.array([filter.q]);
    if ((await estimateSearchMatches(db, pattern, filter.q)) <= SEARCH_INDEX_PATH_MAX_ROWS) {
      // Few matches: collect them through the trigram and tag indexes first, then order just those.
      conditions.push(db`code = ANY(ARRAY(
        SELECT code FROM links WHERE lower(code) LIKE lower(${pattern})
        UNION SELECT code FROM links WHERE target_url ILIKE ${pattern}
        UNION SELECT code FROM links WHERE search_text LIKE lifeline_search_pattern(${filter.q})
        UNION SELECT code FROM links WHERE tags @> ${tag}::text[]))`);
    } else {
      // Many matches: walk the sort order and stop at the page's last row.
      conditions.push(
        db`(lower(code) LIKE lower(${pattern}) OR target_url ILIKE ${pattern}
            OR search_text LIKE lifeline_search_pattern(${filter.q}) OR tags @> ${tag}::text[])`,
      );
    }
  }
  if (filter.status) conditions.push(db`status = ${filter.status}`);
  if (filter.safety) conditions.push(db`safety = ${filter.safety}`);
  if (filter.origin) conditions.push(db`origin = ${filter.origin}`);
  if (filter.tag) conditions.push(db`tags @> ${db.array([filter.tag])}::text[]`);
  if (filter.site) conditions.push(db`site = ${filter.site}`);
  if (filter.domain !== undefined) conditions.push(db`domain = ${filter.domain}`);
  return conditions;
}

/**
 * One page of links in `sort` order, starting after (or before) `position`: a keyset query on the sort
 * column and the code, so rows inserted while someone pages never shift or repeat later pages. Returns up
 * to `limit` rows in display order (a "before" page is read backwards, then reversed).
 */
export async function listLinks(
  db: Db,
  filter: LinkListFilter,
  sort: LinkSort,
  limit: number,
  position?: LinkListPosition,
): Promise<ListedLinkRow[]> {
  const { column, descending } = SORT_SQL[sort];
  const conditions = await linkFilterConditions(db, filter);
  if (sort === 'clicks') return listLinksByClicks(db, conditions, limit, position);

  // Reading "before" a position walks the order backwards.
  const backwards = position?.direction === 'before';
  const forward = descending !== backwards;
  if (position) {
    // ::text first: postgres.js would serialise a timestamptz parameter through a JS Date, losing microseconds.
    const cmp = forward ? db`<` : db`>`;
    conditions.push(
      column === 'code'
        ? db`code ${cmp} ${position.code}`
        : db`(${db(column)}, code) ${cmp} (${position.value}::text::timestamptz, ${position.code})`,
    );
  }
  const where = conditions.reduce((acc, cond) => db`${acc} AND ${cond}`);
  const order = forward ? db`DESC` : db`ASC`;
  const rows = await db<ListedLinkRow[]>`
    SELECT ${db.unsafe(LINK_COLUMNS)}, ${db(column)}::text AS "sortValue"
    FROM links
    WHERE ${where}
    ORDER BY ${db(column)} ${order}, code ${order}
    LIMIT ${limit}`;
  return backwards ? rows.reverse() : rows;
}

/**
 * The list by readers' clicks, most first, the code breaking ties (ADR 0087), in two runs that each walk an
 * index: the clicked links along link_click_totals' (clicks, code) index, each joined to its row by the primary
 * key; then the never-clicked ones (no total above 0) along the primary key. One query over a join of every link
 * would sort the whole table for each page. The cursor's value is the clicks: 0 means the second run.
 */
async function listLinksByClicks(
  db: Db,
  conditions: SqlFragment[],
  limit: number,
  position?: LinkListPosition,
): Promise<ListedLinkRow[]> {
  const where = (extra: SqlFragment[]) => [...conditions, ...extra].reduce((acc, c) => db`${acc} AND ${c}`);
  const clicked = (extra: SqlFragment[], order: SqlFragment, n: number) =>
    n <= 0
      ? Promise.resolve([] as ListedLinkRow[])
      : db<ListedLinkRow[]>`
          SELECT ${db.unsafe(LINK_COLUMNS)}, t.clicks::text AS "sortValue"
          FROM link_click_totals AS t JOIN links USING (code)
          WHERE ${where([db`t.clicks > 0`, ...extra])}
          ORDER BY t.clicks ${order}, code ${order}
          LIMIT ${n}`;
  const unclicked = (extra: SqlFragment[], order: SqlFragment, n: number) =>
    n <= 0
      ? Promise.resolve([] as ListedLinkRow[])
      : db<ListedLinkRow[]>`
          SELECT ${db.unsafe(LINK_COLUMNS)}, '0' AS "sortValue"
          FROM links
          WHERE ${where([
            db`NOT EXISTS (SELECT 1 FROM link_click_totals AS t WHERE t.code = links.code AND t.clicks > 0)`,
            ...extra,
          ])}
          ORDER BY code ${order}
          LIMIT ${n}`;
  const clicks = position ? Number(position.value) : undefined;
  if (position?.direction !== 'before') {
    const rows: ListedLinkRow[] = [];
    if (clicks === undefined || clicks > 0) {
      const after = position
        ? [db`(t.clicks, code) < (${position.value}::text::bigint, ${position.code})`]
        : [];
      rows.push(...(await clicked(after, db`DESC`, limit)));
    }
    const zeroAfter = position && clicks === 0 ? [db`code < ${position.code}`] : [];
    rows.push(...(await unclicked(zeroAfter, db`DESC`, limit - rows.length)));
    return rows;
  }
  // The page before `position`: read upwards from it, then put in display order.
  const rows: ListedLinkRow[] = [];
  if (clicks === 0) rows.push(...(await unclicked([db`code > ${position.code}`], db`ASC`, limit)));
  const before =
    clicks !== undefined && clicks > 0
      ? [db`(t.clicks, code) > (${position.value}::text::bigint, ${position.code})`]
      : [];
  rows.push(...(await clicked(before, db`ASC`, limit - rows.length)));
  return rows.reverse();
}
