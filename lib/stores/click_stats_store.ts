import type { Db } from './sql.ts';

/** Kinds of click_counts rows (the hot path records them; DESIGN.md "The redirect hot path"). */
export type ClickKind = 'human' | 'bot' | 'preview' | 'qr' | 'head';

export interface DailyKindCount {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  kind: ClickKind;
  clicks: number;
}

/** Clicks of a link per UTC day and kind within [from, to). */
export async function listDailyClicks(db: Db, code: string, from: Date, to: Date): Promise<DailyKindCount[]> {
  return db<DailyKindCount[]>`
    SELECT to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, kind, sum(clicks)::bigint AS clicks
    FROM click_counts
    WHERE code = ${code} AND hour >= ${from} AND hour < ${to}
    GROUP BY 1, 2 ORDER BY 1, 2`;
}

/** The top values of one click dimension by clicks of the given kinds within [from, to). */
async function listTopBy(
  db: Db,
  column: 'country' | 'referrer_host',
  code: string,
  kinds: ClickKind[],
  from: Date,
  to: Date,
  limit: number,
): Promise<{ key: string; clicks: number }[]> {
  return db<{ key: string; clicks: number }[]>`
    SELECT ${db(column)} AS key, sum(clicks)::bigint AS clicks FROM click_counts
    WHERE code = ${code} AND hour >= ${from} AND hour < ${to} AND kind = ANY(${db.array(kinds)})
    GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${limit}`;
}

/** The top countries (ISO code, '' when unknown) by clicks of the given kinds within [from, to). */
export function listTopCountries(
  db: Db,
  code: string,
  kinds: ClickKind[],
  from: Date,
  to: Date,
  limit: number,
) {
  return listTopBy(db, 'country', code, kinds, from, to, limit);
}

/** The top referrer hosts ('' when none was sent) by clicks of the given kinds within [from, to). */
export function listTopReferrers(
  db: Db,
  code: string,
  kinds: ClickKind[],
  from: Date,
  to: Date,
  limit: number,
) {
  return listTopBy(db, 'referrer_host', code, kinds, from, to, limit);
}

/** Readers' clicks by one family column (browser or os) over the UTC days [fromDay, toDay], most first. */
export async function listFamilyClicks(
  db: Db,
  column: 'browser' | 'os',
  fromDay: string,
  toDay: string,
  code?: string,
): Promise<{ key: string; clicks: number }[]> {
  return db<{ key: string; clicks: number }[]>`
    SELECT ${db(column)} AS key, sum(clicks)::bigint AS clicks FROM click_families
    WHERE day >= ${fromDay}::date AND day <= ${toDay}::date ${code === undefined ? db`` : db`AND code = ${code}`}
    GROUP BY 1 ORDER BY 2 DESC, 1`;
}
