import type { VendorLinkRow, VendorState } from './link_rows.ts';
import type { Db } from './sql.ts';

// vendor_links: one row per (code, vendor), the state of that vendor's replica of the link.

const COLUMNS = `
  code, vendor, vendor_id AS "vendorId", state, synced_url AS "syncedUrl", last_error AS "lastError",
  attempts, synced_at AS "syncedAt", updated_at AS "updatedAt"`;

/** The vendor's replica state for `code`, or null when it was never attempted. */
export async function getVendorLink(db: Db, code: string, vendor: string): Promise<VendorLinkRow | null> {
  const rows = await db<VendorLinkRow[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM vendor_links WHERE code = ${code} AND vendor = ${vendor}`;
  return rows[0] ?? null;
}

/**
 * Counts one more sync attempt before the vendor is called (creating the row, state `pending`), so a crash
 * mid-call leaves a trace the next attempt recognises. Returns the row as it was before this attempt.
 */
export async function insertVendorAttempt(
  db: Db,
  code: string,
  vendor: string,
): Promise<VendorLinkRow | null> {
  const before = await getVendorLink(db, code, vendor);
  await db`
    INSERT INTO vendor_links (code, vendor, state, attempts) VALUES (${code}, ${vendor}, 'pending', 1)
    ON CONFLICT (code, vendor) DO UPDATE SET attempts = vendor_links.attempts + 1, updated_at = now()`;
  return before;
}

/** The vendor holds the link as we want it. */
export async function updateVendorSynced(
  db: Db,
  code: string,
  vendor: string,
  synced: { vendorId: string | null; syncedUrl: string | null },
): Promise<void> {
  await db`
    UPDATE vendor_links SET state = 'synced', vendor_id = ${synced.vendorId}, synced_url = ${synced.syncedUrl},
      last_error = NULL, synced_at = now(), updated_at = now()
    WHERE code = ${code} AND vendor = ${vendor}`;
}

/** Records a failed or refused attempt (`pending`: will retry; `failed`: will not; `collision`: needs a human). */
export async function updateVendorProblem(
  db: Db,
  code: string,
  vendor: string,
  problem: { state: Exclude<VendorState, 'synced'>; error: string; vendorId?: string | null },
): Promise<void> {
  await db`
    INSERT INTO vendor_links (code, vendor, state, last_error, attempts, vendor_id)
    VALUES (${code}, ${vendor}, ${problem.state}, ${problem.error}, 1, ${problem.vendorId ?? null})
    ON CONFLICT (code, vendor) DO UPDATE SET state = EXCLUDED.state, last_error = EXCLUDED.last_error,
      vendor_id = COALESCE(EXCLUDED.vendor_id, vendor_links.vendor_id), updated_at = now()`;
}

/**
 * Marks new archive links as kept off Bitly (ARCHIVE_LINKS_IN_HOUSE), in the backfill's transaction; a code that
 * already has a Bitly row (an adopted or imported bitlink) keeps it.
 */
export async function insertInhouseOnly(db: Db, codes: string[]): Promise<void> {
  if (codes.length === 0) return;
  await db`
    INSERT INTO vendor_links (code, vendor, state, attempts)
    SELECT t.code, 'bitly', 'inhouse', 0 FROM unnest(${db.array(codes)}::text[]) AS t(code)
    ON CONFLICT (code, vendor) DO NOTHING`;
}

/** Forgets every vendor replica of `code` (only for a never-shared code that is re-minted). */
export async function deleteVendorLinks(db: Db, code: string): Promise<void> {
  await db`DELETE FROM vendor_links WHERE code = ${code}`;
}

/**
 * How many of a vendor's replicas are in `state`, counted up to `cap` (the metrics read it at scrape time: one
 * walk of the (vendor, state) index, bounded).
 */
export async function countVendorLinksInState(
  db: Db,
  vendor: string,
  state: VendorState,
  cap: number,
): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM (
      SELECT 1 FROM vendor_links WHERE vendor = ${vendor} AND state = ${state} LIMIT ${cap}
    ) AS capped`;
  return row?.n ?? 0;
}
