import { LINK_STATUSES, SAFETY_VERDICTS } from '../stores/link_rows.ts';
import { routingRulesProblem, type ServingRecord } from './serving_record.ts';
import type { ServingReplica } from './serving_replica.ts';

/**
 * The shared serving store between the web tier's in-process caches and Postgres (Redis over TCP, or Upstash
 * over REST). It holds one compact record per code, written by refreshes and refilled on Postgres hits.
 */
export interface ServingStore extends ServingReplica {
  readonly kind: 'redis' | 'upstash';
  /** The stored record for `code`, or null when the store has none. */
  get(code: string): Promise<ServingRecord | null>;
  getMany(codes: string[]): Promise<(ServingRecord | null)[]>;
  /**
   * Writes `record` unless the store already holds a newer `version` (atomic compare-and-set on the server);
   * true when written, false when a newer record was kept.
   */
  put(record: ServingRecord): Promise<boolean>;
  delete(code: string): Promise<void>;
  close(): Promise<void>;
}

/** The store's key for a code: `{prefix}link:{code}`. */
export function servingKey(prefix: string, code: string): string {
  return `${prefix}link:${code}`;
}

/**
 * A record as stored: `{version}|{json array}`. The version leads so the write script can compare it without
 * a JSON parser; the array (not an object) keeps a million records small. The link's own UTM values are a
 * seventh element `[campaign, source, medium]` (nulls for unset), present only when the link has any: records
 * written before it existed have six elements and still decode (no UTM of their own). A link answering its
 * archived copy (dead destination, policy `fallback`) has an eighth element, the copy's URL (the seventh is then
 * null when it has no UTM values). A link with routing rules (ADR 0080) has a ninth, its rules as
 * `[kind, values, target]` triples in order (the seventh and eighth then null when unset); every other record
 * stays as it was.
 */
export function encodeServingRecord(record: ServingRecord): string {
  const fields: unknown[] = [
    record.url,
    record.status,
    record.safety,
    record.redirectStatus,
    record.expiresAt,
    record.expiredUrl,
  ];
  if (record.utm) {
    fields.push([record.utm.campaign ?? null, record.utm.source ?? null, record.utm.medium ?? null]);
  }
  if (record.fallbackUrl !== undefined || record.rules !== undefined) {
    if (!record.utm) fields.push(null);
    fields.push(record.fallbackUrl ?? null);
  }
  if (record.rules !== undefined) {
    fields.push(record.rules.map((rule) => [rule.kind, rule.values, rule.target]));
  }
  return `${record.version}|${JSON.stringify(fields)}`;
}

/** The longest target or fallback a record may carry (servingRecordSchema's bound). */
const URL_MAX = 2048;
const STATUSES: ReadonlySet<unknown> = new Set(LINK_STATUSES);
const VERDICTS: ReadonlySet<unknown> = new Set(SAFETY_VERDICTS);

/** One UTM value as stored: a non-empty string, or null for unset; anything else is unreadable. */
function isUtmValue(value: unknown): value is string | null {
  return value === null || (typeof value === 'string' && value !== '');
}

/** The seventh element back to a record's `utm`; undefined when absent or empty, null when unreadable. */
function decodeUtm(value: unknown): ServingRecord['utm'] | null {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length !== 3) return null;
  const [campaign, source, medium] = value as unknown[];
  if (!isUtmValue(campaign) || !isUtmValue(source) || !isUtmValue(medium)) return null;
  if (campaign === null && source === null && medium === null) return undefined;
  return {
    ...(campaign !== null ? { campaign } : {}),
    ...(source !== null ? { source } : {}),
    ...(medium !== null ? { medium } : {}),
  };
}

/** The ninth element back to a record's `rules`; undefined when absent, null when unreadable. */
function decodeRules(value: unknown): ServingRecord['rules'] | null {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return null;
  const rules = (value as unknown[]).map((triple) =>
    Array.isArray(triple) && triple.length === 3
      ? { kind: triple[0], values: triple[1], target: triple[2] }
      : null,
  );
  return routingRulesProblem(rules) === null ? (rules as NonNullable<ServingRecord['rules']>) : null;
}

/**
 * Decodes a stored value for `code`; null for a value this version cannot read (treated as a miss). The checks
 * are servingRecordSchema's, written out: this runs on every serving-store read, where zod's safeParse (an
 * input object, an output object, issue bookkeeping) was a visible share of the path's CPU
 * (tests/lib/redirect/serving_store.test.ts holds both to the same verdicts).
 */
export function decodeServingRecord(code: string, raw: string | null | undefined): ServingRecord | null {
  if (typeof raw !== 'string') return null;
  const bar = raw.indexOf('|');
  if (bar <= 0) return null;
  let fields: unknown;
  try {
    fields = JSON.parse(raw.slice(bar + 1));
  } catch {
    return null;
  }
  if (!Array.isArray(fields)) return null;
  const [url, status, safety, redirectStatus, expiresAt, expiredUrl, utmField, fallbackField, rulesField] =
    fields as unknown[];
  // null: a record with rules and no fallback (the eighth element held its place).
  const fallbackUrl = fallbackField === null ? undefined : fallbackField;
  const version = Number(raw.slice(0, bar));
  if (
    typeof url !== 'string' ||
    url.length > URL_MAX ||
    !STATUSES.has(status) ||
    !VERDICTS.has(safety) ||
    !(
      redirectStatus === null ||
      redirectStatus === 301 ||
      redirectStatus === 302 ||
      redirectStatus === 307 ||
      redirectStatus === 308
    ) ||
    !(expiresAt === null || Number.isSafeInteger(expiresAt)) ||
    !(expiredUrl === null || (typeof expiredUrl === 'string' && expiredUrl.length <= URL_MAX)) ||
    !(fallbackUrl === undefined || (typeof fallbackUrl === 'string' && fallbackUrl.length <= URL_MAX)) ||
    !Number.isSafeInteger(version) ||
    version < 0
  ) {
    return null;
  }
  const utm = decodeUtm(utmField);
  if (utm === null) return null;
  const rules = decodeRules(rulesField);
  if (rules === null) return null;
  const record: ServingRecord = {
    code,
    url,
    status: status as ServingRecord['status'],
    safety: safety as ServingRecord['safety'],
    redirectStatus: redirectStatus as ServingRecord['redirectStatus'],
    expiresAt: expiresAt as number | null,
    expiredUrl: expiredUrl as string | null,
    ...(utm ? { utm } : {}),
    version,
    ...(fallbackUrl !== undefined ? { fallbackUrl: fallbackUrl as string } : {}),
    ...(rules !== undefined ? { rules } : {}),
  };
  return record;
}

/**
 * The versioned write, run atomically by Redis (EVAL, which Upstash supports too): keeps the stored record
 * when its leading version is greater than the one offered. KEYS[1] = key, ARGV[1] = version, ARGV[2] = value.
 */
export const PUT_IF_NOT_OLDER_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current then
  local stored = tonumber(string.match(current, '^(%d+)|'))
  if stored and stored > tonumber(ARGV[1]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`;
