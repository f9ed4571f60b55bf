import type { LinkRow } from './link_rows.ts';
import { KEY_DOMAIN_SQL, LINK_COLUMNS, type NewLink } from './link_store.ts';
import type { Db } from './sql.ts';

const text = (v: string | number | Date | null | undefined) =>
  v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v);

/**
 * Inserts many links and their `link.created` audit entries in ONE statement (one round trip): the rows
 * travel as parallel arrays through unnest(), and a data-modifying CTE writes the audit entries for exactly
 * the rows inserted. Rows whose code or (site, post) is already taken are skipped (ON CONFLICT DO NOTHING);
 * the caller compares codes to find them. Returns the inserted rows.
 */
export async function insertLinksWithAudit(
  db: Db,
  links: NewLink[],
  audit: { actor: string; reason?: string | null },
): Promise<LinkRow[]> {
  if (links.length === 0) return [];
  const column = <T>(pick: (l: NewLink) => T) =>
    db.array(links.map((l) => text(pick(l) as never)) as string[]);
  return db<LinkRow[]>`
    WITH input AS (
      SELECT * FROM unnest(
        ${column((l) => l.code)}::text[], ${column((l) => l.targetUrl)}::text[], ${column((l) => l.status)}::text[],
        ${column((l) => l.safety ?? 'unknown')}::text[], ${column((l) => l.origin)}::text[],
        ${column((l) => l.site)}::text[], ${column((l) => l.postId)}::text[], ${column((l) => l.title)}::text[],
        ${column((l) => l.owner)}::text[], ${column((l) => l.expiresAt)}::text[], ${column((l) => l.expiredUrl)}::text[],
        ${column((l) => l.redirectStatus)}::text[], ${column((l) => JSON.stringify(l.tags ?? []))}::text[],
        ${column((l) => l.dedupeKey)}::text[], ${column((l) => l.safetyReason)}::text[],
        ${column((l) => l.safetyCheckedAt)}::text[], ${column((l) => l.utmCampaign)}::text[],
        ${column((l) => l.utmSource)}::text[], ${column((l) => l.utmMedium)}::text[]
      ) AS t(code, target_url, status, safety, origin, site, post_id, title, owner, expires_at, expired_url,
             redirect_status, tags, dedupe_key, safety_reason, safety_checked_at, utm_campaign, utm_source,
             utm_medium)
    ), inserted AS (
      INSERT INTO links (code, domain, target_url, status, safety, origin, site, post_id, title, owner, expires_at,
                         expired_url, redirect_status, tags, dedupe_key, safety_reason, safety_checked_at,
                         utm_campaign, utm_source, utm_medium)
      SELECT code, ${db.unsafe(KEY_DOMAIN_SQL)}, target_url, status, safety, origin, site, post_id::bigint, title, owner,
             expires_at::timestamptz, expired_url, redirect_status::smallint,
             ARRAY(SELECT jsonb_array_elements_text(tags::jsonb)), dedupe_key, safety_reason,
             safety_checked_at::timestamptz, utm_campaign, utm_source, utm_medium
      FROM input
      ON CONFLICT DO NOTHING
      RETURNING ${db.unsafe(LINK_COLUMNS)}
    ), audited AS (
      INSERT INTO audit_log (code, actor, action, after, reason)
      SELECT code, ${audit.actor}, 'link.created',
             jsonb_build_object('url', "targetUrl", 'status', status, 'origin', origin, 'batch', true)
               || CASE WHEN title IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('title', title) END,
             ${audit.reason ?? null}
      FROM inserted
    )
    SELECT * FROM inserted`;
}

/** Which of `codes` exist (deleted or not). */
export async function listExistingCodes(db: Db, codes: string[]): Promise<Set<string>> {
  if (codes.length === 0) return new Set();
  // A join on unnest through the primary key: for `code = ANY($1)` the planner picks the trigram GIN index
  // on code (measured ~210 ms for 500 codes on 100,000 links, against a few ms; see link_lifecycle_store).
  const rows = await db<{ code: string }[]>`
    SELECT l.code FROM unnest(${db.array(codes)}::text[]) AS t(code)
    JOIN links AS l ON l.code = t.code COLLATE "C"`;
  return new Set(rows.map((r) => r.code));
}

/** The owner's live links for any of the dedupe keys (see getLinkByDedupeKey), oldest first per key. */
export async function listLinksByDedupeKeys(db: Db, owner: string, keys: string[]): Promise<LinkRow[]> {
  if (keys.length === 0) return [];
  return db<LinkRow[]>`
    SELECT DISTINCT ON (dedupe_key) ${db.unsafe(LINK_COLUMNS)} FROM links
    WHERE owner = ${owner} AND dedupe_key = ANY(${db.array(keys)}::text[]) AND deleted_at IS NULL
      AND status IN ('pending', 'active')
    ORDER BY dedupe_key, created_at`;
}

/** Links already minted for any of the (site, postId) pairs, as "site|postId" → code. */
export async function listCodesByPosts(
  db: Db,
  posts: { site: string; postId: number }[],
): Promise<Map<string, string>> {
  if (posts.length === 0) return new Map();
  const rows = await db<{ site: string; postId: number; code: string }[]>`
    SELECT site, post_id AS "postId", code FROM links
    WHERE (site, post_id) IN (
      SELECT * FROM unnest(${db.array(posts.map((p) => p.site))}::text[],
                           ${db.array(posts.map((p) => String(p.postId)))}::bigint[]))`;
  return new Map(rows.map((r) => [`${r.site}|${r.postId}`, r.code]));
}

/**
 * Takes transaction-scoped advisory locks on many keys in one statement, in a fixed order so two batches
 * with overlapping keys cannot deadlock.
 */
export async function lockKeys(db: Db, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await db`
    SELECT pg_advisory_xact_lock(h) FROM (
      SELECT DISTINCT hashtextextended(k, 0) AS h FROM unnest(${db.array(keys)}::text[]) AS k ORDER BY 1
    ) AS locks`;
}
