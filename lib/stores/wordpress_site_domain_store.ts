// Which short domain each WordPress site's posts are minted in (migrations/0100_links_short_domain.sql): a row
// only for a site on another domain than the default.
import type { Db } from './sql.ts';

/** The stored domain a site's new links are minted in: '' (the default) unless an admin mapped it elsewhere. */
export async function getSiteDomain(db: Db, site: string): Promise<string> {
  const rows = await db<{ domain: string }[]>`SELECT domain FROM wordpress_site_domains WHERE site = ${site}`;
  return rows[0]?.domain ?? '';
}

/** Maps a site to a stored domain; '' (the default) removes its row. */
export async function setSiteDomain(db: Db, site: string, domain: string): Promise<void> {
  if (domain === '') {
    await db`DELETE FROM wordpress_site_domains WHERE site = ${site}`;
    return;
  }
  await db`
    INSERT INTO wordpress_site_domains (site, domain) VALUES (${site}, ${domain})
    ON CONFLICT (site) DO UPDATE SET domain = EXCLUDED.domain, updated_at = now()`;
}

/** Every site mapped to another domain than the default, by site. */
export async function listSiteDomains(db: Db): Promise<{ site: string; domain: string }[]> {
  return db<
    { site: string; domain: string }[]
  >`SELECT site, domain FROM wordpress_site_domains ORDER BY site`;
}
