// Expiry of links (ADR 0091; OPERATIONS.md, "Expiry"): Postgres decides. One sweeper per deployment
// (workflows/expiry_sweep.ts) expires the due links in batches, each in one transaction with its audit entries,
// webhook events and sync-queue rows, so the sync drainer carries them to the serving store, caches, CDN and
// Bitly in batches too. The sweeper only needs to know when to look next: every propagation pass of a link with
// an expiry tells it the date (lib/propagation/ensure_expiry_timer.ts).

import type { Logger } from '../shared/logger.ts';
import { insertAuditEntries } from '../stores/audit_store.ts';
import {
  type ExpiredLink,
  expireDueLinks as expireDueLinkRows,
  expireLinkIfDue,
  getNextExpiry,
} from '../stores/link_lifecycle_store.ts';
import { getLinkByCode } from '../stores/link_store.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import type { Db, Sql } from '../stores/sql.ts';
import { recordWebhookEvents } from '../stores/webhook_outbox_store.ts';
import type { ExpirySweeper } from '../temporal/expiry_sweeper.ts';
import type { SyncQueueKicker } from '../temporal/link_sync.ts';

/** EXPIRY_BATCH_SIZE's default: links expired per sweep (one transaction). */
export const DEFAULT_EXPIRY_BATCH_SIZE = 500;

/** The sync-queue reason of an expiry (the drainer's rows and logs say why the link is being synced). */
export const EXPIRY_SYNC_REASON = 'link.expired (expiry reached)';

export interface ExpiryDeps {
  sql: Sql;
  logger: Logger;
  /** Wakes the sync-queue drainer once the expired links are queued. */
  queue: SyncQueueKicker;
  /** EXPIRY_BATCH_SIZE. */
  expiryBatchSize?: number | undefined;
}

/** What one sweep did: in the sweeper's history (a count, not the codes: the audit log names them). */
export interface ExpirySweepResult {
  expired: number;
  batchSize: number;
  /** The next expiry of a live active link (epoch ms) and how far it is from Postgres's clock; null: none. */
  nextDueAtMs: number | null;
  nextDueInMs: number | null;
}

/**
 * What an expiry writes beside the status, in the same transaction, for each link: the audit entry (actor
 * `system:expire`), the `link.expired` webhook event and the link's row in the sync queue.
 */
async function recordExpiries(tx: Db, expired: readonly ExpiredLink[]): Promise<void> {
  if (expired.length === 0) return;
  await insertAuditEntries(
    tx,
    expired.map((link) => ({
      code: link.code,
      actor: 'system:expire',
      action: 'link.status_changed',
      before: { status: 'active', expiresAt: link.expiresAt.toISOString() },
      after: { status: 'expired' },
      reason: 'expiry reached',
    })),
  );
  await recordWebhookEvents(
    tx,
    'link.expired',
    expired.map((link) => ({ data: { code: link.code, expiresAt: link.expiresAt.toISOString() } })),
  );
  await enqueueLinkSyncs(
    tx,
    expired.map((link) => link.code),
    EXPIRY_SYNC_REASON,
  );
}

/**
 * One sweep: expires up to EXPIRY_BATCH_SIZE due links (oldest due first) in one transaction, with what
 * recordExpiries writes for each, then kicks the sync-queue drainer once, and reads the next due date. A sweep
 * retried after a crash redoes nothing: the committed links are no longer active, an uncommitted one is still due.
 */
export async function expireDueLinks(deps: ExpiryDeps): Promise<ExpirySweepResult> {
  const batchSize = deps.expiryBatchSize ?? DEFAULT_EXPIRY_BATCH_SIZE;
  const expired = await deps.sql.begin(async (tx) => {
    const rows = await expireDueLinkRows(tx, batchSize);
    await recordExpiries(tx, rows);
    return rows;
  });
  if (expired.length > 0) {
    deps.logger.info({ expired: expired.length, oldestDue: expired[0]!.expiresAt }, 'links expired');
    // A kick lost here only delays the rows until the next kick (the worker's start kicks when rows wait).
    await deps.queue.kickSyncQueue(`${expired.length} links expired`);
  }
  const next = await getNextExpiry(deps.sql);
  return {
    expired: expired.length,
    batchSize,
    nextDueAtMs: next?.atMs ?? null,
    nextDueInMs: next?.inMs ?? null,
  };
}

/**
 * The activity of the per-link timers still running from before the sweeper (`expire:{code}`). A due link is
 * expired exactly as the sweeper does it (it may fire before the sweeper reaches it); anything else ends the
 * timer: the sweeper expired it already, its date moved (the sweeper holds the new one) or it is no longer live.
 * `rescheduled` is never returned now: the old workflow code still tests for it.
 */
export async function expireLink(
  deps: ExpiryDeps,
  code: string,
): Promise<{ outcome: 'expired' | 'rescheduled' | 'not_active' | 'swept'; expiresAtMs: number | null }> {
  const step = await deps.sql.begin(async (tx) => {
    const expiredAt = await expireLinkIfDue(tx, code);
    if (expiredAt) {
      await recordExpiries(tx, [{ code, expiresAt: expiredAt }]);
      return 'expired_now' as const;
    }
    const row = await getLinkByCode(tx, code);
    if (!row || row.deletedAt) return 'not_active' as const;
    return row.status === 'active' || row.status === 'expired' ? ('swept' as const) : ('not_active' as const);
  });
  if (step === 'expired_now') {
    deps.logger.info({ code }, 'link expired');
    await deps.queue.kickSyncQueue('1 link expired');
    return { outcome: 'expired', expiresAtMs: null };
  }
  return { outcome: step, expiresAtMs: null };
}

/**
 * Makes sure the sweeper runs and knows the earliest expiry Postgres holds (the worker's start): one indexed
 * read and one signalWithStart. With no expiring link it is started all the same (told "now": it sweeps once,
 * finds nothing and sleeps its longest).
 */
export async function wakeExpirySweeper(deps: { sql: Sql; sweeper: ExpirySweeper }): Promise<number | null> {
  const next = await getNextExpiry(deps.sql);
  await deps.sweeper.expiresAt(next?.atMs ?? Date.now());
  return next?.atMs ?? null;
}
