import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { insertAuditEntry } from '../lib/stores/audit_store.ts';
import { expireLinkIfDue } from '../lib/stores/link_lifecycle_store.ts';
import { getLinkByCode } from '../lib/stores/link_store.ts';
import { signalExpiry } from '../lib/temporal/expiry_signal.ts';
import { signalLinkSync } from '../lib/temporal/workflow_gateway.ts';
import type { ActivityDeps } from './deps.ts';

/** Expiry activities: idempotent; Postgres decides, the timer only wakes us. */
export function createExpiryActivities(deps: ActivityDeps) {
  return {
    /**
     * Makes `expire:{code}` agree with Postgres: armed with expires_at while the link is live (active or
     * pending), told to stop otherwise. Called by every sync pass, so any change to expiresAt moves the timer.
     */
    async ensureExpiryTimer(input: { code: string }): Promise<{ timer: string; expiresAtMs: number | null }> {
      const row = await getLinkByCode(deps.sql, input.code);
      if (!row) throw ApplicationFailure.nonRetryable(`no link ${input.code}`, 'BadInput');
      const live = row.deletedAt === null && (row.status === 'active' || row.status === 'pending');
      const expiresAtMs = live && row.expiresAt ? row.expiresAt.getTime() : null;
      const { client, info } = Context.current();
      const timer = await signalExpiry(client.workflow, {
        taskQueue: info.taskQueue,
        code: input.code,
        expiresAtMs,
      });
      return { timer, expiresAtMs };
    },

    /**
     * Marks the link expired if it is active and its time has come (by Postgres's clock), audits it, and
     * hands it to the sync workflow (caches, serving store, vendors). A later date in Postgres reschedules;
     * an already expired link is signalled again (a retry after the commit), anything else is left alone.
     */
    async expireLink(input: { code: string }): Promise<{
      outcome: 'expired' | 'rescheduled' | 'not_active';
      expiresAtMs: number | null;
    }> {
      const step = await deps.sql.begin(async (tx) => {
        const expiredAt = await expireLinkIfDue(tx, input.code);
        if (expiredAt) {
          await insertAuditEntry(tx, {
            code: input.code,
            actor: 'system:expire',
            action: 'link.status_changed',
            before: { status: 'active', expiresAt: expiredAt.toISOString() },
            after: { status: 'expired' },
            reason: 'expiry reached',
          });
          return { kind: 'expired_now' as const };
        }
        const row = await getLinkByCode(tx, input.code);
        if (!row || row.deletedAt) return { kind: 'not_active' as const };
        if (row.status === 'expired') return { kind: 'already_expired' as const };
        if (row.status === 'active') {
          return {
            kind: 'rescheduled' as const,
            expiresAtMs: row.expiresAt ? row.expiresAt.getTime() : null,
          };
        }
        return { kind: 'not_active' as const };
      });
      if (step.kind === 'not_active') return { outcome: 'not_active', expiresAtMs: null };
      if (step.kind === 'rescheduled') return { outcome: 'rescheduled', expiresAtMs: step.expiresAtMs };
      if (step.kind === 'expired_now') deps.logger.info({ code: input.code }, 'link expired');
      // Also when an earlier attempt committed the expiry but its sync signal may not have gone out.
      const { client, info } = Context.current();
      await signalLinkSync(client.workflow, info.taskQueue, input.code, 'expired');
      return { outcome: 'expired', expiresAtMs: null };
    },
  };
}
