// Expiry is decided in Postgres and carried out by the one sweeper (ADR 0091); each propagation pass of a link
// (a `sync:{code}` pass) tells the sweeper the link's date, so a date earlier than its next wake-up wakes it then.
// The sync-queue drainer tells it once per batch (sync_link_batch.ts), with the batch's earliest date.
import { PermanentFailure } from '../shared/errors.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { getLinkByCode } from '../stores/link_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { ExpirySweeper } from '../temporal/expiry_sweeper.ts';

/** The date the sweeper must know of for this link: expires_at while it is live and active, else none. */
export function sweptExpiry(row: Pick<LinkRow, 'status' | 'deletedAt' | 'expiresAt'>): number | null {
  return row.deletedAt === null && row.status === 'active' && row.expiresAt ? row.expiresAt.getTime() : null;
}

/**
 * Tells the sweeper the link's expiry when it has one (signalWithStart: a sweeper that is not running starts).
 * Nothing to undo for a removed or later date: the sweeper reads Postgres whenever it wakes. (The name is the
 * activity's, recorded in sync:{code} histories; there is no timer per link any more.)
 */
export async function ensureExpiryTimer(
  deps: { sql: Sql; sweeper: ExpirySweeper },
  code: string,
): Promise<{ timer: 'signalled' | 'none'; expiresAtMs: number | null }> {
  const row = await getLinkByCode(deps.sql, code);
  if (!row) throw new PermanentFailure(`no link ${code}`);
  const expiresAtMs = sweptExpiry(row);
  if (expiresAtMs === null) return { timer: 'none', expiresAtMs };
  await deps.sweeper.expiresAt(expiresAtMs);
  return { timer: 'signalled', expiresAtMs };
}
