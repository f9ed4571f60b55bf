import type { ServingReplica } from '../reconcile/serving_replica.ts';
import { type ServingRecord, servingRecordSchema } from './serving_record.ts';

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
 * written before it existed have six elements and still decode (no UTM of their own).
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
  return `${record.version}|${JSON.stringify(fields)}`;
}

/** The seventh element back to a record's `utm`; undefined when absent or empty, null when unreadable. */
function decodeUtm(value: unknown): ServingRecord['utm'] | null {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length !== 3) return null;
  const [campaign, source, medium] = value as unknown[];
  const utm: NonNullable<ServingRecord['utm']> = {};
  for (const [key, v] of [
    ['campaign', campaign],
    ['source', source],
    ['medium', medium],
  ] as const) {
    if (typeof v === 'string' && v !== '') utm[key] = v;
    else if (v !== null) return null;
  }
  return Object.keys(utm).length > 0 ? utm : undefined;
}

/** Decodes a stored value for `code`; null for a value this version cannot read (treated as a miss). */
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
  const utm = decodeUtm(fields[6]);
  if (utm === null) return null;
  const parsed = servingRecordSchema.safeParse({
    code,
    url: fields[0],
    status: fields[1],
    safety: fields[2],
    redirectStatus: fields[3],
    expiresAt: fields[4],
    expiredUrl: fields[5],
    ...(utm ? { utm } : {}),
    version: Number(raw.slice(0, bar)),
  });
  return parsed.success ? parsed.data : null;
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
