import type { Db } from './sql.ts';

// SQL of vendor_daily_clicks (migrations/0041_vendor_daily_clicks.sql): a vendor's own click counts per UTC day.

/** One day as a vendor counted it. */
export interface VendorDayCount {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  clicks: number;
}

/** A link the vendor holds, as the pull walks them (in code order). */
export interface VendorHeldLink {
  code: string;
  /** The vendor's id of the link (Bitly: `domain/hash`). */
  vendorId: string;
}

/**
 * Active links synced to `vendor` with a vendor id, after `afterCode` in code order (byte order, as the
 * primary key), at most `limit`.
 */
export async function listVendorHeldLinks(
  db: Db,
  vendor: string,
  afterCode: string,
  limit: number,
): Promise<VendorHeldLink[]> {
  return db<VendorHeldLink[]>`
    SELECT v.code, v.vendor_id AS "vendorId"
    FROM vendor_links AS v JOIN links AS l ON l.code = v.code
    WHERE v.vendor = ${vendor} AND v.state = 'synced' AND v.vendor_id IS NOT NULL
      AND l.status = 'active' AND l.deleted_at IS NULL AND v.code > ${afterCode}
    ORDER BY v.code
    LIMIT ${limit}`;
}

/** Writes the days a vendor reported for a link (each replaces what was stored for that day), in one statement. */
export async function upsertVendorDailyClicks(
  db: Db,
  input: { code: string; vendor: string; days: readonly VendorDayCount[]; fetchedAt: Date },
): Promise<void> {
  if (input.days.length === 0) return;
  await db`
    INSERT INTO vendor_daily_clicks (code, vendor, day, clicks, fetched_at)
    SELECT ${input.code}, ${input.vendor}, t.day::date, t.clicks::bigint, ${input.fetchedAt}
    FROM unnest(${db.array(input.days.map((d) => d.day))}::text[],
                ${db.array(input.days.map((d) => String(d.clicks)))}::text[]) AS t(day, clicks)
    ON CONFLICT (code, vendor, day) DO UPDATE SET clicks = EXCLUDED.clicks, fetched_at = EXCLUDED.fetched_at`;
}

/** The stored days of a link within [fromDay, toDay] (UTC days, inclusive), oldest first. */
export async function listVendorDailyClicks(
  db: Db,
  code: string,
  vendor: string,
  fromDay: string,
  toDay: string,
): Promise<VendorDayCount[]> {
  return db<VendorDayCount[]>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, clicks FROM vendor_daily_clicks
    WHERE code = ${code} AND vendor = ${vendor} AND day BETWEEN ${fromDay}::date AND ${toDay}::date
    ORDER BY day`;
}

/**
 * Whether the vendor holds a copy of the link (a vendor id in vendor_links), and when its clicks were last
 * pulled (null: never).
 */
export async function getVendorClicksState(
  db: Db,
  code: string,
  vendor: string,
): Promise<{ held: boolean; fetchedAt: Date | null }> {
  const [row] = await db<{ held: boolean; fetchedAt: Date | null }[]>`
    SELECT EXISTS (SELECT 1 FROM vendor_links WHERE code = ${code} AND vendor = ${vendor}
                   AND vendor_id IS NOT NULL) AS held,
           (SELECT max(fetched_at) FROM vendor_daily_clicks WHERE code = ${code} AND vendor = ${vendor})
             AS "fetchedAt"`;
  return row ?? { held: false, fetchedAt: null };
}

/** When the active front changed (audit entries `front.switched`), oldest first: the front after each switch. */
export async function listFrontSwitches(db: Db, before: Date): Promise<{ at: Date; front: string }[]> {
  // audit_log_code_idx serves `code IS NULL`: deployment-wide entries, few.
  return db<{ at: Date; front: string }[]>`
    SELECT created_at AS at, after->>'active' AS front FROM audit_log
    WHERE code IS NULL AND action = 'front.switched' AND created_at < ${before}
    ORDER BY id`;
}
