// The worker side of a bulk change (workflows/bulk_change_links.ts, ADR 0086): fix the selection once, then
// apply it in batches. Each batch is one transaction: the links are locked and changed, each changed link gets
// its own audit entry (the run and its reason named in it, as a mass retarget does) and its code goes into the
// sync queue (ADR 0024), whose drainer carries the change to the serving store, Bitly, the CDN and the expiry
// timers in batches; one kick per batch wakes the drainer. Webhook subscribers get the same events, in the same
// transaction, as for one link changed by hand (`link.updated`, `link.deleted`). A link the run may not or need not change is skipped
// with the reason, never failed.

import { PermanentFailure } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import type { Logger } from '../shared/logger.ts';
import {
  type BulkChangeRow,
  type BulkLinkUpdate,
  finishBulkChange,
  getBulkChange,
  insertBulkAuditEntries,
  lockPendingBulkLinks,
  markBulkLinks,
  selectBulkChangeLinks,
  updateBulkLinks,
} from '../stores/bulk_change_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import type { Sql } from '../stores/sql.ts';
import { linkEventData, recordWebhookEvents, type WebhookEvent } from '../stores/webhook_outbox_store.ts';
import type { SyncQueueKicker } from '../temporal/link_sync.ts';
import { getDedupeKey } from './dedupe_key.ts';
import { isPostLinkLocked } from './post_link_rules.ts';

export interface BulkChangeRunDeps {
  sql: Sql;
  logger: Logger;
  queue: SyncQueueKicker;
}

/** Most tags a link may carry (as the link schema says). */
const MAX_TAGS = 50;

async function requireRun(sql: Sql, runId: string): Promise<BulkChangeRow> {
  const run = await getBulkChange(sql, runId);
  if (!run) throw new PermanentFailure(`no bulk change ${runId}`);
  return run;
}

/** Fixes the run's selection (one statement); returns how many links it holds. */
export async function selectBulkChange(
  deps: BulkChangeRunDeps,
  input: { runId: string },
): Promise<{ total: number }> {
  const run = await requireRun(deps.sql, input.runId);
  return { total: await selectBulkChangeLinks(deps.sql, run) };
}

type Decision =
  | { skip: string }
  | {
      update: BulkLinkUpdate;
      action: string;
      before: Record<string, unknown>;
      after: Record<string, unknown>;
    };

/** The same "same owner, same url, same options" key the link would get if created as it now is. */
async function dedupeKeyAfter(row: LinkRow, change: { tags?: string[]; expiresAt?: Date | null }) {
  if (row.dedupeKey === null) return undefined;
  const expiresAt = change.expiresAt !== undefined ? change.expiresAt : row.expiresAt;
  const utm = { campaign: row.utmCampaign, source: row.utmSource, medium: row.utmMedium };
  return getDedupeKey({
    url: row.targetUrl,
    ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
    ...(row.expiredUrl ? { expiredUrl: row.expiredUrl } : {}),
    ...(row.redirectStatus ? { redirectStatus: row.redirectStatus as 301 } : {}),
    tags: change.tags ?? row.tags,
    ...(row.site !== null && row.postId !== null ? { site: row.site, postId: row.postId } : {}),
    ...(row.title !== null ? { title: row.title } : {}),
    ...(utm.campaign || utm.source || utm.medium
      ? {
          utm: {
            ...(utm.campaign ? { campaign: utm.campaign } : {}),
            ...(utm.source ? { source: utm.source } : {}),
            ...(utm.medium ? { medium: utm.medium } : {}),
          },
        }
      : {}),
  });
}

/** What the run does to one link, or why it leaves it alone. */
async function decide(run: BulkChangeRow, row: LinkRow | undefined, now: Date): Promise<Decision> {
  if (!row || row.deletedAt) return { skip: 'deleted' };
  const locked = isPostLinkLocked(row, run.mayManagePostLinks);
  switch (run.action) {
    case 'tag_add':
    case 'tag_remove': {
      const tag = run.params.tag!;
      const has = row.tags.includes(tag);
      if (run.action === 'tag_add' ? has : !has) return { skip: 'unchanged' };
      if (run.action === 'tag_add' && row.tags.length >= MAX_TAGS)
        return { skip: fieldProblem('maxTags', { max: MAX_TAGS }) };
      const tags = run.action === 'tag_add' ? [...row.tags, tag] : row.tags.filter((t) => t !== tag);
      const dedupeKey = await dedupeKeyAfter(row, { tags });
      return {
        update: { code: row.code, tags, ...(dedupeKey !== undefined ? { dedupeKey } : {}) },
        action: 'link.updated',
        before: { tags: row.tags },
        after: { tags },
      };
    }
    case 'expire': {
      if (locked) return { skip: `expiresAt ${fieldProblem('postDecided')}` };
      const expiresAt = run.params.expiresAt ? new Date(run.params.expiresAt) : null;
      if ((expiresAt?.getTime() ?? null) === (row.expiresAt?.getTime() ?? null)) return { skip: 'unchanged' };
      // As in an edit: moving an expired link's expiry into the future (or clearing it) brings it back.
      const revive = row.status === 'expired' && (expiresAt === null || expiresAt.getTime() > now.getTime());
      const dedupeKey = await dedupeKeyAfter(row, { expiresAt });
      return {
        update: {
          code: row.code,
          expiresAt,
          ...(revive ? { status: 'active' } : {}),
          ...(dedupeKey !== undefined ? { dedupeKey } : {}),
        },
        action: 'link.updated',
        before: {
          expiresAt: row.expiresAt?.toISOString() ?? null,
          ...(revive ? { status: row.status } : {}),
        },
        after: { expiresAt: expiresAt?.toISOString() ?? null, ...(revive ? { status: 'active' } : {}) },
      };
    }
    case 'block':
      if (locked) return { skip: `status ${fieldProblem('postDecided')}` };
      if (row.status === 'blocked') return { skip: 'unchanged' };
      return {
        update: { code: row.code, status: 'blocked' },
        action: 'link.status_changed',
        before: { status: row.status },
        after: { status: 'blocked' },
      };
    case 'delete':
      if (locked) return { skip: 'is bound to a WordPress post; deleting it needs the admin scope' };
      return {
        update: { code: row.code, status: 'gone', deleted: true },
        action: 'link.deleted',
        before: { status: row.status, url: row.targetUrl },
        after: { status: 'gone', deleted: true },
      };
  }
}

/**
 * Applies the next `batchSize` links of the run after `cursor` in one transaction (links, audit, sync queue,
 * outcomes), then wakes the sync queue's drainer. A retried batch finds its links no longer pending.
 */
export async function applyBulkChangeBatch(
  deps: BulkChangeRunDeps,
  input: { runId: string; batchSize: number; cursor: string },
): Promise<{ applied: number; skipped: number; cursor: string; done: boolean }> {
  const run = await requireRun(deps.sql, input.runId);
  const now = new Date();
  const reason = run.reason ? `bulk change ${run.id}: ${run.reason}` : `bulk change ${run.id}`;
  const result = await deps.sql.begin(async (tx) => {
    const { codes, links } = await lockPendingBulkLinks(tx, run.id, input.cursor, input.batchSize);
    const updates: BulkLinkUpdate[] = [];
    const audits: { code: string; action: string; before: unknown; after: unknown }[] = [];
    const outcomes: { code: string; state: 'applied' | 'skipped'; problem: string | null }[] = [];
    const updated: WebhookEvent[] = [];
    const deleted: WebhookEvent[] = [];
    for (const code of codes) {
      const decision = await decide(run, links.get(code), now);
      if ('skip' in decision) {
        outcomes.push({ code, state: 'skipped', problem: decision.skip });
        continue;
      }
      updates.push(decision.update);
      audits.push({ code, action: decision.action, before: decision.before, after: decision.after });
      outcomes.push({ code, state: 'applied', problem: null });
      const row = links.get(code)!;
      if (decision.action === 'link.deleted')
        deleted.push({ data: { code, url: row.targetUrl, title: row.title, reason } });
      else
        updated.push({
          data: {
            ...linkEventData({
              ...row,
              status: (decision.update.status as LinkRow['status'] | undefined) ?? row.status,
              version: row.version + 1,
            }),
            changed: Object.keys(decision.after),
          },
        });
    }
    await updateBulkLinks(tx, updates);
    await insertBulkAuditEntries(tx, audits, { actor: run.requestedBy, reason });
    await recordWebhookEvents(tx, 'link.updated', updated);
    await recordWebhookEvents(tx, 'link.deleted', deleted);
    // Queued with the change, so no copy is ever left behind (ADR 0024).
    await enqueueLinkSyncs(
      tx,
      updates.map((u) => u.code),
      `link.bulk_changed (${run.action}) by ${run.requestedBy}`,
    );
    await markBulkLinks(tx, run.id, outcomes);
    return { codes, applied: updates.length };
  });
  if (result.applied > 0) await deps.queue.kickSyncQueue(`bulk change ${run.id}`);
  deps.logger.info(
    { runId: run.id, applied: result.applied, skipped: result.codes.length - result.applied },
    'bulk change batch applied',
  );
  return {
    applied: result.applied,
    skipped: result.codes.length - result.applied,
    cursor: result.codes.at(-1) ?? input.cursor,
    done: result.codes.length < input.batchSize,
  };
}

/** Ends the run (finished, or failed when its workflow gave up). */
export async function finishBulkChangeRun(
  deps: BulkChangeRunDeps,
  input: { runId: string; status: 'finished' | 'failed' },
): Promise<void> {
  await finishBulkChange(deps.sql, input.runId, input.status);
  // One more kick: a batch's kick lost to a retry (its links no longer pending) still reaches the drainer.
  await deps.queue.kickSyncQueue(`bulk change ${input.runId} ${input.status}`);
}
