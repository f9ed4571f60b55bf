// SQL of a post's identity (lib/publishing/post_identity.ts, ADR 0057): which link a post's GUID or permalink
// path names, moving a code to another post ID, and the site's installation and migration mode.
import type { LinkRow } from './link_rows.ts';
import { LINK_COLUMNS } from './link_store.ts';
import type { Db } from './sql.ts';

/** Records the GUID a post link was seen with (the newest wins). */
export async function upsertPostGuid(db: Db, code: string, site: string, guid: string): Promise<void> {
  await db`
    INSERT INTO wordpress_post_guids (code, site, guid) VALUES (${code}, ${site}, ${guid})
    ON CONFLICT (code) DO UPDATE SET site = EXCLUDED.site, guid = EXCLUDED.guid
    WHERE wordpress_post_guids.guid IS DISTINCT FROM EXCLUDED.guid OR wordpress_post_guids.site <> EXCLUDED.site`;
}

/** Records many GUIDs at once (a reconciliation page). */
export async function upsertPostGuids(
  db: Db,
  site: string,
  rows: { code: string; guid: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  await db`
    INSERT INTO wordpress_post_guids (code, site, guid)
    SELECT code, ${site}, guid FROM unnest(${db.array(rows.map((r) => r.code))}::text[],
                                           ${db.array(rows.map((r) => r.guid))}::text[]) AS t(code, guid)
    ON CONFLICT (code) DO UPDATE SET site = EXCLUDED.site, guid = EXCLUDED.guid`;
}

/** The site's live (not deleted) links last seen with any of these GUIDs, as guid → links. */
export async function listLinksByGuids(
  db: Db,
  site: string,
  guids: string[],
): Promise<Map<string, LinkRow[]>> {
  const out = new Map<string, LinkRow[]>();
  if (guids.length === 0) return out;
  const rows = await db<(LinkRow & { guid: string })[]>`
    SELECT l.*, g.guid FROM wordpress_post_guids AS g
    JOIN LATERAL (SELECT ${db.unsafe(LINK_COLUMNS)} FROM links
                  WHERE code = g.code AND site = ${site} AND deleted_at IS NULL) AS l ON true
    WHERE g.site = ${site} AND md5(g.guid) = ANY(SELECT md5(x) FROM unnest(${db.array(guids)}::text[]) AS x)
      AND g.guid = ANY(${db.array(guids)}::text[])`;
  for (const row of rows) out.set(row.guid, [...(out.get(row.guid) ?? []), row]);
  return out;
}

/**
 * The site's live links whose target has one of these paths (the path, query included, after the host), as
 * path → links. A site's links only: a scan of that site's rows, run in migration mode only.
 */
export async function listLinksByPaths(
  db: Db,
  site: string,
  paths: string[],
): Promise<Map<string, LinkRow[]>> {
  const out = new Map<string, LinkRow[]>();
  if (paths.length === 0) return out;
  const rows = await db<(LinkRow & { path: string })[]>`
    SELECT * FROM (
      SELECT ${db.unsafe(LINK_COLUMNS)}, regexp_replace(target_url, '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*', '') AS path
      FROM links WHERE site = ${site} AND deleted_at IS NULL
    ) AS l WHERE l.path = ANY(${db.array(paths)}::text[])`;
  for (const row of rows) out.set(row.path, [...(out.get(row.path) ?? []), row]);
  return out;
}

/**
 * Frees a post ID: its link keeps its site and target but holds a negative placeholder instead (a detached
 * link, waiting for its own post to claim it). Returns the placeholder.
 */
export async function detachLinkFromPost(db: Db, code: string): Promise<number> {
  const [row] = await db<{ postId: number }[]>`
    UPDATE links SET post_id = -nextval('detached_post_ids'), updated_at = now(), version = version + 1
    WHERE code = ${code} RETURNING post_id AS "postId"`;
  return Number(row!.postId);
}

/** Binds a link to a post ID (free: the caller detached any link that held it). */
export async function updateLinkPost(db: Db, code: string, postId: number): Promise<LinkRow> {
  const [row] = await db<LinkRow[]>`
    UPDATE links SET post_id = ${postId}, updated_at = now(), version = version + 1
    WHERE code = ${code} RETURNING ${db.unsafe(LINK_COLUMNS)}`;
  return row!;
}

/** The site's live links that lost their post to another post's claim and were not claimed since. */
export async function listDetachedLinks(db: Db, site: string): Promise<LinkRow[]> {
  return db<LinkRow[]>`
    SELECT ${db.unsafe(LINK_COLUMNS)} FROM links
    WHERE site = ${site} AND post_id < 0 AND deleted_at IS NULL ORDER BY code`;
}

export interface SiteInstallationRow {
  site: string;
  installationId: string | null;
  previousInstallationId: string | null;
  installationChangedAt: Date | null;
  migratingSince: Date | null;
  migrationReconciledAt: Date | null;
}

const SITE_COLUMNS = `site, installation_id AS "installationId",
  previous_installation_id AS "previousInstallationId", installation_changed_at AS "installationChangedAt",
  migrating_since AS "migratingSince", migration_reconciled_at AS "migrationReconciledAt"`;

export async function getSiteInstallation(db: Db, site: string): Promise<SiteInstallationRow | null> {
  const rows = await db<SiteInstallationRow[]>`
    SELECT ${db.unsafe(SITE_COLUMNS)} FROM wordpress_sites WHERE site = ${site}`;
  return rows[0] ?? null;
}

export async function listSiteInstallations(db: Db): Promise<SiteInstallationRow[]> {
  return db<SiteInstallationRow[]>`SELECT ${db.unsafe(SITE_COLUMNS)} FROM wordpress_sites ORDER BY site`;
}

/**
 * Records the installation a signed message came from. The first one a site sends is simply stored; a
 * different one switches the site into migration mode. Returns whether it switched now. A site not yet known
 * (no restUrl stored) is left alone: its first event with a restUrl creates it.
 */
export async function recordInstallation(
  db: Db,
  site: string,
  installationId: string,
): Promise<{ switched: boolean }> {
  const rows = await db<{ switched: boolean }[]>`
    WITH before AS (SELECT installation_id FROM wordpress_sites WHERE site = ${site} FOR UPDATE)
    UPDATE wordpress_sites AS s SET
      installation_id = ${installationId},
      previous_installation_id = CASE WHEN b.installation_id IS NULL THEN s.previous_installation_id
                                      ELSE b.installation_id END,
      installation_changed_at = CASE WHEN b.installation_id IS NULL THEN s.installation_changed_at ELSE now() END,
      migrating_since = CASE WHEN b.installation_id IS NULL THEN s.migrating_since ELSE now() END,
      migration_reconciled_at = CASE WHEN b.installation_id IS NULL THEN s.migration_reconciled_at ELSE NULL END,
      updated_at = now()
    FROM before AS b
    WHERE s.site = ${site} AND b.installation_id IS DISTINCT FROM ${installationId}
    RETURNING b.installation_id IS NOT NULL AS switched`;
  return { switched: rows[0]?.switched ?? false };
}

/** Notes a complete reconciliation pass during migration mode. */
export async function updateMigrationReconciled(db: Db, site: string): Promise<void> {
  await db`UPDATE wordpress_sites SET migration_reconciled_at = now(), updated_at = now()
           WHERE site = ${site} AND migrating_since IS NOT NULL`;
}

/** Ends migration mode once a complete pass happened since the switch and nothing is left to review. */
export async function endMigrationIfSettled(db: Db, site: string): Promise<boolean> {
  const rows = await db`
    UPDATE wordpress_sites SET migrating_since = NULL, updated_at = now()
    WHERE site = ${site} AND migrating_since IS NOT NULL AND migration_reconciled_at IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM wordpress_reviews WHERE site = ${site} AND status = 'open')
    RETURNING site`;
  return rows.length > 0;
}
