// Expiry of a link (DESIGN.md, "Expiry"): Postgres decides; a durable timer per link (workflows/expire_link.ts)
// only wakes us at expires_at. Moving the date moves the timer; reaching it marks the link expired.

import type { Logger } from '../shared/logger.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import { expireLinkIfDue } from '../stores/link_lifecycle_store.ts';
import { getLinkByCode } from '../stores/link_store.ts';
import type { Sql } from '../stores/sql.ts';
import { recordWebhookEvent } from '../stores/webhook_outbox_store.ts';
import type { LinkSyncRequester } from '../temporal/link_sync.ts';

/**
 * Marks the link expired if it is active and its time has come (by Postgres's clock), audits it, and hands it
 * to the sync workflow (caches, serving store, vendors). A later date in Postgres reschedules; an already
 * expired link is handed over again (a retry after the commit), anything else is left alone.
 */
export async function expireLink(
  deps: { sql: Sql; logger: Logger; sync: LinkSyncRequester },
  code: string,
): Promise<{ outcome: 'expired' | 'rescheduled' | 'not_active'; expiresAtMs: number | null }> {
  const step = await deps.sql.begin(async (tx) => {
    const expiredAt = await expireLinkIfDue(tx, code);
    if (expiredAt) {
      await insertAuditEntry(tx, {
        code,
        actor: 'system:expire',
        action: 'link.status_changed',
        before: { status: 'active', expiresAt: expiredAt.toISOString() },
        after: { status: 'expired' },
        reason: 'expiry reached',
      });
      await recordWebhookEvent(tx, 'link.expired', { code, expiresAt: expiredAt.toISOString() });
      return { kind: 'expired_now' as const };
    }
    const row = await getLinkByCode(tx, code);
    if (!row || row.deletedAt) return { kind: 'not_active' as const };
    if (row.status === 'expired') return { kind: 'already_expired' as const };
    if (row.status === 'active') {
      return { kind: 'rescheduled' as const, expiresAtMs: row.expiresAt ? row.expiresAt.getTime() : null };
    }
    return { kind: 'not_active' as const };
  });
  if (step.kind === 'not_active') return { outcome: 'not_active', expiresAtMs: null };
  if (step.kind === 'rescheduled') return { outcome: 'rescheduled', expiresAtMs: step.expiresAtMs };
  if (step.kind === 'expired_now') deps.logger.info({ code }, 'link expired');
  // Also when an earlier attempt committed the expiry but its sync signal may not have gone out.
  await deps.sync.syncLink(code, 'expired');
  return { outcome: 'expired', expiresAtMs: null };
}
