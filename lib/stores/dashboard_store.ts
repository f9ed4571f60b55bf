import type { Db } from './sql.ts';

// SQL of the newsroom dashboard (ADR 0079): readers' clicks per UTC day from click_days (migration 0124), the
// window's links joined to their rows by the primary key, and Bitly's per-day counts from vendor_daily_clicks.
// Every read is a range of a day-leading index: its cost follows the clicked links of the window, not the archive.

/** A day's total. */
export interface DayTotal {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  clicks: number;
}

/** Readers' clicks per UTC day within [fromDay, toDay] (days without clicks are absent), oldest first. */
export async function listClickDayTotals(db: Db, fromDay: string, toDay: string): Promise<DayTotal[]> {
  return db<DayTotal[]>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(clicks)::float8 AS clicks
    FROM click_days WHERE day BETWEEN ${fromDay}::date AND ${toDay}::date
    GROUP BY day ORDER BY day`;
}

/** A vendor's clicks of all the links it reported on, per UTC day within [fromDay, toDay], oldest first. */
export async function listVendorDayTotals(
  db: Db,
  vendor: string,
  fromDay: string,
  toDay: string,
): Promise<DayTotal[]> {
  return db<DayTotal[]>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(clicks)::float8 AS clicks
    FROM vendor_daily_clicks WHERE vendor = ${vendor} AND day BETWEEN ${fromDay}::date AND ${toDay}::date
    GROUP BY day ORDER BY day`;
}

/** One of the window's most clicked links. */
export interface TopLinkRow {
  code: string;
  title: string | null;
  clicks: number;
}

/** A group's clicks within the window (a tag, a WordPress site, a short domain). */
export interface GroupRow {
  /** The tag, the site or the stored domain; null for the links outside any (no site). */
  key: string | null;
  clicks: number;
  links: number;
}

export interface WindowBreakdown {
  topLinks: TopLinkRow[];
  byTag: GroupRow[];
  bySite: GroupRow[];
  byDomain: GroupRow[];
}

/**
 * The window's clicks by link, tag, WordPress site and short domain, in one statement: the clicked links of
 * [fromDay, toDay] summed once from click_days' day range (materialised), joined to their rows for the columns
 * the groupings need (deleted links left out), then the four groupings of that set, each cut to `limit` rows,
 * most first (ties by key, so the order is stable); only the top links' titles are read.
 */
export async function getWindowBreakdown(
  db: Db,
  fromDay: string,
  toDay: string,
  limit: number,
): Promise<WindowBreakdown> {
  const [row] = await db<{ top: TopLinkRow[]; tags: GroupRow[]; sites: GroupRow[]; domains: GroupRow[] }[]>`
    WITH window_clicks AS MATERIALIZED (
      SELECT code, sum(clicks) AS clicks
      FROM click_days WHERE day BETWEEN ${fromDay}::date AND ${toDay}::date
      GROUP BY code HAVING sum(clicks) > 0
    ), clicked AS MATERIALIZED (
      SELECT w.code, w.clicks, l.tags, l.site, l.domain
      FROM window_clicks AS w JOIN links AS l ON l.code = w.code
      WHERE l.deleted_at IS NULL
    )
    SELECT
      (SELECT coalesce(json_agg(t ORDER BY t.clicks DESC, t.code), '[]') FROM (
         SELECT c.code, l.title, c.clicks::float8 AS clicks
         FROM (SELECT code, clicks FROM clicked ORDER BY clicks DESC, code LIMIT ${limit}) AS c
         JOIN links AS l ON l.code = c.code
       ) AS t) AS top,
      (SELECT coalesce(json_agg(g ORDER BY g.clicks DESC, g.key), '[]') FROM (
         SELECT tag AS key, sum(clicks)::float8 AS clicks, count(*)::int AS links
         FROM clicked, unnest(tags) AS tag GROUP BY tag ORDER BY 2 DESC, 1 LIMIT ${limit}
       ) AS g) AS tags,
      (SELECT coalesce(json_agg(g ORDER BY g.clicks DESC, g.key NULLS LAST), '[]') FROM (
         SELECT site AS key, sum(clicks)::float8 AS clicks, count(*)::int AS links
         FROM clicked GROUP BY site ORDER BY 2 DESC, 1 NULLS LAST LIMIT ${limit}
       ) AS g) AS sites,
      (SELECT coalesce(json_agg(g ORDER BY g.clicks DESC, g.key), '[]') FROM (
         SELECT domain AS key, sum(clicks)::float8 AS clicks, count(*)::int AS links
         FROM clicked GROUP BY domain ORDER BY 2 DESC, 1 LIMIT ${limit}
       ) AS g) AS domains`;
  return {
    topLinks: row!.top,
    byTag: row!.tags,
    bySite: row!.sites,
    byDomain: row!.domains,
  };
}
