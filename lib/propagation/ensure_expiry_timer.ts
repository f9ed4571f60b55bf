// The expiry timer is a copy too: each propagation pass (a `sync:{code}` pass, a sync-queue batch) leaves the
// link's durable timer (`expire:{code}`, workflows/expire_link.ts) in step with expires_at in Postgres.
import { PermanentFailure } from '../shared/errors.ts';
import { getLinkByCode } from '../stores/link_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { ExpiryTimers } from '../temporal/expiry_timers.ts';

/**
 * Makes the link's timer agree with Postgres: armed with expires_at while the link is live (active or pending),
 * told to stop otherwise. Called by every propagation pass, so any change to expiresAt moves the timer.
 */
export async function ensureExpiryTimer(
  deps: { sql: Sql; timers: ExpiryTimers },
  code: string,
): Promise<{ timer: string; expiresAtMs: number | null }> {
  const row = await getLinkByCode(deps.sql, code);
  if (!row) throw new PermanentFailure(`no link ${code}`);
  const live = row.deletedAt === null && (row.status === 'active' || row.status === 'pending');
  const expiresAtMs = live && row.expiresAt ? row.expiresAt.getTime() : null;
  return { timer: await deps.timers.set(code, expiresAtMs), expiresAtMs };
}
