import { keyDomain } from '../shared/link_key.ts';
import type {
  LinkOrigin,
  LinkRow,
  LinkStatus,
  RoutingRule,
  SafetyVerdict,
  ServingRow,
  ServingValues,
  ServingValuesWithCode,
  VendorLinkRow,
  VendorTargetRow,
} from './link_rows.ts';
import type { Db } from './sql.ts';

/** Every column of `links`, camel-cased into a LinkRow. */
export const LINK_COLUMNS = `
  code, target_url AS "targetUrl", status, safety, safety_reason AS "safetyReason",
  safety_checked_at AS "safetyCheckedAt", origin, site, post_id AS "postId", title, owner,
  expires_at AS "expiresAt", expired_url AS "expiredUrl", redirect_status AS "redirectStatus", tags,
  utm_campaign AS "utmCampaign", utm_source AS "utmSource", utm_medium AS "utmMedium",
  dedupe_key AS "dedupeKey", source_version AS "sourceVersion",
  deleted_at AS "deletedAt", created_at AS "createdAt", updated_at AS "updatedAt", version,
  fallback_url AS "fallbackUrl", domain, routing_rules AS "routingRules"`;

/** The stored domain of a `code` column holding a link's key, in SQL (keyDomain of lib/shared/link_key.ts). */
export const KEY_DOMAIN_SQL = `(CASE WHEN strpos(code, '/') = 0 THEN '' ELSE split_part(code, '/', 1) END)`;

/** LINK_COLUMNS for a query that names `links` as `l`. */
export const QUALIFIED_LINK_COLUMNS = `
  l.code, l.target_url AS "targetUrl", l.status, l.safety, l.safety_reason AS "safetyReason",
  l.safety_checked_at AS "safetyCheckedAt", l.origin, l.site, l.post_id AS "postId", l.title, l.owner,
  l.expires_at AS "expiresAt", l.expired_url AS "expiredUrl", l.redirect_status AS "redirectStatus", l.tags,
  l.utm_campaign AS "utmCampaign", l.utm_source AS "utmSource", l.utm_medium AS "utmMedium",
  l.dedupe_key AS "dedupeKey", l.source_version AS "sourceVersion",
  l.deleted_at AS "deletedAt", l.created_at AS "createdAt", l.updated_at AS "updatedAt", l.version,
  l.fallback_url AS "fallbackUrl", l.domain, l.routing_rules AS "routingRules"`;

/**
 * The columns a link's serving record is made of (lib/redirect/serving_record.ts, ServingRow): the resolver's
 * lookup on a miss reads these only. The other columns (six timestamps, tags, titles…) cost postgres.js a parse
 * each, per lookup, for nothing the redirect uses.
 */
const VENDOR_COLUMNS = `
  code, vendor, vendor_id AS "vendorId", state, synced_url AS "syncedUrl", last_error AS "lastError",
  attempts, synced_at AS "syncedAt", updated_at AS "updatedAt"`;

/** The row for `code`, deleted or not, or null. */
export async function getLinkByCode(db: Db, code: string): Promise<LinkRow | null> {
  const rows = await db<LinkRow[]>`SELECT ${db.unsafe(LINK_COLUMNS)} FROM links WHERE code = ${code}`;
  return rows[0] ?? null;
}

/**
 * The links with these codes (deleted ones included), keyed by code: the resolver's Postgres read on a miss
 * (lookups queued for a connection go together, ADR 0055), and the batch reads of syncs and reconciliation.
 */
export async function getLinksByCodes(db: Db, codes: string[]): Promise<Map<string, LinkRow>> {
  if (codes.length === 0) return new Map();
  // A join on unnest: for `code = ANY($1)` the planner picks the trigram index (see link_lifecycle_store).
  const rows = await db<LinkRow[]>`
    SELECT ${db.unsafe(QUALIFIED_LINK_COLUMNS)}
    FROM unnest(${db.array(codes)}::text[]) AS t(code) JOIN links AS l ON l.code = t.code COLLATE "C"`;
  return new Map(rows.map((r) => [r.code, r]));
}

/** A ServingRow's columns but its code (names only links has, so a join with a list of codes can use them). */
const SERVING_ROW_FIELDS = `target_url AS "targetUrl", status, safety, expires_at AS "expiresAt",
  expired_url AS "expiredUrl", redirect_status AS "redirectStatus", utm_campaign AS "utmCampaign",
  utm_source AS "utmSource", utm_medium AS "utmMedium", version, fallback_url AS "fallbackUrl",
  routing_rules AS "routingRules"`;

/**
 * getLinksByCodes with only the columns toVendorTarget reads: reconciliation compares every bitlink against its
 * link, and decoding every column (titles, tags, six timestamps) made postgres.js the largest part of the worker's
 * time there (docs/BENCHMARKS.md, "The missing pass reads a window's marks once; the Bitly leg reads what it
 * compares").
 */
export async function getVendorTargetRowsByCodes(
  db: Db,
  codes: string[],
): Promise<Map<string, VendorTargetRow>> {
  if (codes.length === 0) return new Map();
  const rows = await db<VendorTargetRow[]>`
    SELECT l.code, ${db.unsafe(SERVING_ROW_FIELDS)}, deleted_at AS "deletedAt"
    FROM unnest(${db.array(codes)}::text[]) AS t(code) JOIN links AS l ON l.code = t.code COLLATE "C"`;
  return new Map(rows.map((r) => [r.code, r]));
}

/** What the redirect needs of the row for `code`, deleted or not, or null. */
export async function getServingRowByCode(db: Db, code: string): Promise<ServingRow | null> {
  const rows = await db<ServingRow[]>`
    SELECT code, ${db.unsafe(SERVING_ROW_FIELDS)} FROM links WHERE code = ${code}`;
  return rows[0] ?? null;
}

/**
 * The resolver's hot-path lookup: the serving columns of `code`'s row, deleted or not, as positional values
 * (ServingValues; none or one row). Positional, because postgres.js then fills an array by index where named
 * rows cost a megamorphic store per column; without the code, which the caller has (one string fewer to
 * decode). The query text is written out on one line without padding: postgres.js rebuilds the text and looks
 * its prepared statement up by it on every call (hashing every character), so each character is paid per lookup.
 */
export function selectServingValues(db: Db, code: string): Promise<ServingValues[]> {
  return db`SELECT target_url,status,safety,redirect_status,expires_at,expired_url,utm_campaign,utm_source,utm_medium,version,fallback_url,routing_rules FROM links WHERE code=${code}`.values() as unknown as Promise<
    ServingValues[]
  >;
}

/**
 * selectServingValues for many codes in one statement: each found row's ServingValues with its code appended
 * (index 12), in no particular order; codes not stored have no row. The resolver batches the lookups that
 * queue for a connection into one of these (createLookupGate in lib/redirect/layered_resolver.ts). One
 * statement text for any number of codes (one array parameter), so one prepared statement.
 */
export function selectManyServingValues(db: Db, codes: readonly string[]): Promise<ServingValuesWithCode[]> {
  return db`SELECT target_url,status,safety,redirect_status,expires_at,expired_url,utm_campaign,utm_source,utm_medium,version,fallback_url,routing_rules,code FROM links WHERE code=ANY(${codes as string[]})`.values() as unknown as Promise<
    ServingValuesWithCode[]
  >;
}

/** The article's canonical link, or null until minted. */
export async function getLinkByPost(db: Db, site: string, postId: number): Promise<LinkRow | null> {
  const rows = await db<LinkRow[]>`
    SELECT ${db.unsafe(LINK_COLUMNS)} FROM links WHERE site = ${site} AND post_id = ${postId}`;
  return rows[0] ?? null;
}

/** The owner's live link with the same url and options (see getDedupeKey), or null. */
export async function getLinkByDedupeKey(db: Db, owner: string, dedupeKey: string): Promise<LinkRow | null> {
  const rows = await db<LinkRow[]>`
    SELECT ${db.unsafe(LINK_COLUMNS)} FROM links
    WHERE owner = ${owner} AND dedupe_key = ${dedupeKey} AND deleted_at IS NULL
      AND status IN ('pending', 'active')
    ORDER BY created_at LIMIT 1`;
  return rows[0] ?? null;
}

export interface NewLink {
  code: string;
  targetUrl: string;
  status: LinkStatus;
  safety?: SafetyVerdict;
  safetyReason?: string | null;
  safetyCheckedAt?: Date | null;
  origin: LinkOrigin;
  site?: string | null;
  postId?: number | null;
  title?: string | null;
  owner: string;
  expiresAt?: Date | null;
  expiredUrl?: string | null;
  redirectStatus?: number | null;
  tags?: string[];
  utmCampaign?: string | null;
  utmSource?: string | null;
  utmMedium?: string | null;
  dedupeKey?: string | null;
  sourceVersion?: Date | null;
  routingRules?: RoutingRule[] | null;
}

/**
 * Inserts a link; returns null (inserting nothing) when the code, or the (site, post) pair, is already
 * taken. The UNIQUE keys do the collision work; the caller decides whether to re-mint.
 */
export async function insertLink(db: Db, link: NewLink): Promise<LinkRow | null> {
  const rows = await db<LinkRow[]>`
    INSERT INTO links (code, domain, target_url, status, safety, safety_reason, safety_checked_at, origin, site, post_id,
                       title, owner, expires_at, expired_url, redirect_status, tags, dedupe_key, source_version,
                       utm_campaign, utm_source, utm_medium, routing_rules)
    VALUES (${link.code}, ${keyDomain(link.code)}, ${link.targetUrl}, ${link.status}, ${link.safety ?? 'unknown'},
            ${link.safetyReason ?? null}, ${link.safetyCheckedAt ?? null}, ${link.origin},
            ${link.site ?? null}, ${link.postId ?? null}, ${link.title ?? null}, ${link.owner},
            ${link.expiresAt ?? null}, ${link.expiredUrl ?? null}, ${link.redirectStatus ?? null},
            ${db.array(link.tags ?? [])}, ${link.dedupeKey ?? null}, ${link.sourceVersion ?? null},
            ${link.utmCampaign ?? null}, ${link.utmSource ?? null}, ${link.utmMedium ?? null},
            ${link.routingRules ? db.json(link.routingRules as never) : null})
    ON CONFLICT DO NOTHING
    RETURNING ${db.unsafe(LINK_COLUMNS)}`;
  return rows[0] ?? null;
}

/** Fields an update may change; `version` is bumped and `updated_at` set on every update. */
export interface LinkChanges {
  targetUrl?: string;
  status?: LinkStatus;
  safety?: SafetyVerdict;
  safetyReason?: string | null;
  safetyCheckedAt?: Date | null;
  title?: string | null;
  expiresAt?: Date | null;
  expiredUrl?: string | null;
  redirectStatus?: number | null;
  tags?: string[];
  utmCampaign?: string | null;
  utmSource?: string | null;
  utmMedium?: string | null;
  sourceVersion?: Date | null;
  deletedAt?: Date | null;
  dedupeKey?: string | null;
  /** null: no rules (an empty list is stored as null too). */
  routingRules?: RoutingRule[] | null;
}

const CHANGE_COLUMNS: Record<keyof LinkChanges, string> = {
  targetUrl: 'target_url',
  status: 'status',
  safety: 'safety',
  safetyReason: 'safety_reason',
  safetyCheckedAt: 'safety_checked_at',
  title: 'title',
  expiresAt: 'expires_at',
  expiredUrl: 'expired_url',
  redirectStatus: 'redirect_status',
  tags: 'tags',
  utmCampaign: 'utm_campaign',
  utmSource: 'utm_source',
  utmMedium: 'utm_medium',
  sourceVersion: 'source_version',
  deletedAt: 'deleted_at',
  dedupeKey: 'dedupe_key',
  routingRules: 'routing_rules',
};

/**
 * Applies `changes` to the link and returns the new row, or null when the link does not exist (or, with
 * `expectedVersion`, when someone else changed it first).
 */
export async function updateLink(
  db: Db,
  code: string,
  changes: LinkChanges,
  expectedVersion?: number,
): Promise<LinkRow | null> {
  const set: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(CHANGE_COLUMNS) as [keyof LinkChanges, string][]) {
    const value = changes[key];
    if (value === undefined) continue;
    // jsonb: written as JSON (postgres.js would send a JS array as a Postgres array).
    set[column] = key === 'routingRules' && value !== null ? db.json(value as never) : value;
  }
  const columns = Object.keys(set);
  const versionCheck = expectedVersion === undefined ? db`` : db`AND version = ${expectedVersion}`;
  // postgres.js expands db(set, ...columns) into "a = $1, b = $2" only when SET is in the same template.
  const rows =
    columns.length > 0
      ? await db<LinkRow[]>`
          UPDATE links SET ${db(set as Record<string, never>, ...columns)}, updated_at = now(), version = version + 1
          WHERE code = ${code} ${versionCheck}
          RETURNING ${db.unsafe(LINK_COLUMNS)}`
      : await db<LinkRow[]>`
          UPDATE links SET updated_at = now(), version = version + 1
          WHERE code = ${code} ${versionCheck}
          RETURNING ${db.unsafe(LINK_COLUMNS)}`;
  return rows[0] ?? null;
}

/** Vendor replicas of the given codes. */
export async function listVendorLinks(db: Db, codes: string[]): Promise<VendorLinkRow[]> {
  if (codes.length === 0) return [];
  return db<VendorLinkRow[]>`
    SELECT ${db.unsafe(VENDOR_COLUMNS)} FROM vendor_links WHERE code = ANY(${db.array(codes)}) ORDER BY vendor`;
}

/** Groups vendor replicas by code. */
export function groupVendorLinks(rows: VendorLinkRow[]): Map<string, VendorLinkRow[]> {
  const byCode = new Map<string, VendorLinkRow[]>();
  for (const row of rows) {
    const list = byCode.get(row.code);
    if (list) list.push(row);
    else byCode.set(row.code, [row]);
  }
  return byCode;
}

/** The row for `code`, locked until the transaction ends (edits read-modify-write under it), or null. */
export async function getLinkByCodeForUpdate(db: Db, code: string): Promise<LinkRow | null> {
  const rows = await db<LinkRow[]>`
    SELECT ${db.unsafe(LINK_COLUMNS)} FROM links WHERE code = ${code} FOR UPDATE`;
  return rows[0] ?? null;
}

/** A random sample of live active links (the failover's check through the public short domain). */
export async function listRandomActiveLinks(
  db: Db,
  limit: number,
  options: { onBitly?: boolean; domain?: string } = {},
): Promise<LinkRow[]> {
  // onBitly: not archive links kept off Bitly (vendor state `inhouse`), which Bitly cannot answer.
  return db<LinkRow[]>`
    SELECT ${db.unsafe(LINK_COLUMNS)} FROM links AS l
    WHERE status = 'active' AND deleted_at IS NULL
      -- One short domain's links (default: the default's): the fronts checked here answer that domain (ADR 0073).
      AND domain = ${options.domain ?? ''}
      AND NOT (${options.onBitly === true} AND EXISTS (
        SELECT 1 FROM vendor_links AS v WHERE v.code = l.code AND v.vendor = 'bitly' AND v.state = 'inhouse'))
    ORDER BY random() LIMIT ${limit}`;
}

/** The code `count` links after `after` (by code), or null when fewer are left: where a window ends. */
export async function findCodeWindowEnd(db: Db, after: string, count: number): Promise<string | null> {
  const [row] = await db<{ code: string }[]>`
    SELECT code FROM links WHERE code > ${after} ORDER BY code OFFSET ${count - 1} LIMIT 1`;
  return row?.code ?? null;
}
