import type { Db } from './sql.ts';

// wordpress_sites: where each site's signed listing lives, as the newest signed event told us.

export interface WordPressSiteRow {
  site: string;
  restUrl: string;
  seenAt: Date;
}

/**
 * Records a site's restUrl unless a newer one is already stored. `seenAt` is when we received it (our clock: a
 * sender's claimed time could pin a restUrl for good); a row dated in the future is always replaced.
 */
export async function upsertWordPressSite(
  db: Db,
  site: string,
  restUrl: string,
  seenAt: string | Date,
): Promise<void> {
  await db`
    INSERT INTO wordpress_sites (site, rest_url, seen_at) VALUES (${site}, ${restUrl}, ${seenAt}::timestamptz)
    ON CONFLICT (site) DO UPDATE SET rest_url = EXCLUDED.rest_url, seen_at = EXCLUDED.seen_at, updated_at = now()
    WHERE wordpress_sites.seen_at <= EXCLUDED.seen_at OR wordpress_sites.seen_at > now()`;
}

export async function getWordPressSite(db: Db, site: string): Promise<WordPressSiteRow | null> {
  const rows = await db<WordPressSiteRow[]>`
    SELECT site, rest_url AS "restUrl", seen_at AS "seenAt" FROM wordpress_sites WHERE site = ${site}`;
  return rows[0] ?? null;
}

export async function listWordPressSiteRows(db: Db): Promise<WordPressSiteRow[]> {
  return db<WordPressSiteRow[]>`
    SELECT site, rest_url AS "restUrl", seen_at AS "seenAt" FROM wordpress_sites ORDER BY site`;
}
