// SQL of the WordPress leg of reconciliation (lib/reconcile/reconcile_wordpress.ts) and of mass changes:
// many links changed in one statement.
import type { LinkRow } from './link_rows.ts';
import { LINK_COLUMNS } from './link_store.ts';
import type { Db } from './sql.ts';

/**
 * Live links (active or pending) of a site whose post the run did not see in WordPress's listing (no mark
 * `{site}:{postId}` on the wordpress side), created before the run started: posts deleted permanently. A link
 * detached from its post (a negative placeholder, ADR 0057) is not judged here. One stretch of the site's post IDs
 * at a time, `afterPostId` < post ID ≤ `throughPostId` (null: to the end), so that no statement reads a whole
 * site: at ten million links a site holds a million, 12 s in one statement, near the activity's heartbeat timeout.
 * Each link's mark is probed through the marks' primary key (a subquery, not an anti join): a hash anti join would
 * read all of the site's marks again for every stretch.
 */
export async function listLinksAbsentFromListing(
  db: Db,
  options: {
    runId: string;
    site: string;
    startedAt: Date;
    afterPostId: number;
    throughPostId: number | null;
  },
): Promise<LinkRow[]> {
  return db<LinkRow[]>`
    SELECT ${db.unsafe(LINK_COLUMNS)} FROM links AS l
    WHERE l.site = ${options.site} AND l.post_id > ${Math.max(0, options.afterPostId)}
      ${options.throughPostId === null ? db`` : db`AND l.post_id <= ${options.throughPostId}`}
      AND l.deleted_at IS NULL AND l.status IN ('active', 'pending')
      AND l.created_at < ${options.startedAt}
      AND (SELECT true FROM reconcile_marks AS m
           WHERE m.run_id = ${options.runId} AND m.side = 'wordpress'
             AND m.code = (${`${options.site}:`} || l.post_id::text) COLLATE "C") IS NULL
    ORDER BY l.post_id`;
}

/**
 * The post ID of the site's `span`-th link past `afterPostId` (by post ID, any status): where a stretch of
 * `listLinksAbsentFromListing` ends. Null when fewer remain (the last stretch runs to the end). An index-only walk
 * of `links_site_post_key`.
 */
export async function findPostIdStretchEnd(
  db: Db,
  options: { site: string; afterPostId: number; span: number },
): Promise<number | null> {
  const [row] = await db<{ postId: string }[]>`
    SELECT post_id::text AS "postId" FROM links
    WHERE site = ${options.site} AND post_id > ${Math.max(0, options.afterPostId)}
    ORDER BY post_id OFFSET ${options.span - 1} LIMIT 1`;
  return row ? Number(row.postId) : null;
}

/** LINK_COLUMNS qualified with the alias `l` (an UPDATE … FROM unnest has a `code` of its own). */
const L_COLUMNS = `
  l.code, l.target_url AS "targetUrl", l.status, l.safety, l.safety_reason AS "safetyReason",
  l.safety_checked_at AS "safetyCheckedAt", l.origin, l.site, l.post_id AS "postId", l.title, l.owner,
  l.expires_at AS "expiresAt", l.expired_url AS "expiredUrl", l.redirect_status AS "redirectStatus", l.tags,
  l.utm_campaign AS "utmCampaign", l.utm_source AS "utmSource", l.utm_medium AS "utmMedium",
  l.dedupe_key AS "dedupeKey", l.source_version AS "sourceVersion",
  l.deleted_at AS "deletedAt", l.created_at AS "createdAt", l.updated_at AS "updatedAt", l.version,
  l.routing_rules AS "routingRules"`;

/** One link's new values in a mass change (null: leave as it is). */
export interface LinkBatchChange {
  code: string;
  targetUrl?: string | null;
  status?: string | null;
  safety?: string | null;
  safetyReason?: string | null;
  safetyCheckedAt?: Date | null;
  /** True: clear expires_at and expired_url (an article's link that expired is put back for good). */
  clearExpiry?: boolean;
  /** Only while the link still has this version (nobody changed it since it was read); null: any. */
  expectedVersion?: number | null;
}

/**
 * Applies many changes in one statement (version bumped, updated_at set). A change whose expectedVersion no
 * longer matches is skipped; returns the rows as changed.
 */
export async function updateLinksBatch(db: Db, changes: LinkBatchChange[]): Promise<LinkRow[]> {
  if (changes.length === 0) return [];
  const col = (pick: (c: LinkBatchChange) => string | number | Date | null | undefined) =>
    db.array(
      changes.map((c) => {
        const v = pick(c);
        return v === null || v === undefined ? '' : v instanceof Date ? v.toISOString() : String(v);
      }),
    );
  return db<LinkRow[]>`
    UPDATE links AS l SET
      target_url = COALESCE(NULLIF(t.target_url, ''), l.target_url),
      status = COALESCE(NULLIF(t.status, ''), l.status),
      safety = COALESCE(NULLIF(t.safety, ''), l.safety),
      safety_reason = CASE WHEN t.safety = '' THEN l.safety_reason ELSE NULLIF(t.safety_reason, '') END,
      safety_checked_at = CASE WHEN t.safety = '' THEN l.safety_checked_at
                               ELSE NULLIF(t.safety_checked_at, '')::timestamptz END,
      expires_at = CASE WHEN t.clear_expiry = '' THEN l.expires_at END,
      expired_url = CASE WHEN t.clear_expiry = '' THEN l.expired_url END,
      updated_at = now(), version = l.version + 1
    FROM unnest(${col((c) => c.code)}::text[], ${col((c) => c.targetUrl)}::text[], ${col((c) => c.status)}::text[],
                ${col((c) => c.safety)}::text[], ${col((c) => c.safetyReason)}::text[],
                ${col((c) => c.safetyCheckedAt)}::text[], ${col((c) => (c.clearExpiry ? 'yes' : null))}::text[],
                ${col((c) => c.expectedVersion)}::text[])
      AS t(code, target_url, status, safety, safety_reason, safety_checked_at, clear_expiry, expected_version)
    WHERE l.code = t.code COLLATE "C"
      AND (t.expected_version = '' OR l.version = t.expected_version::int)
    RETURNING ${db.unsafe(L_COLUMNS)}`;
}
