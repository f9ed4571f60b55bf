// What admins see and decide about WordPress sites (ADR 0057): each site's installation and migration mode, the
// review list identity matching filed, and the breaker's holds. Resolving a review item binds its code to a
// post, leaves it gone, or keeps it as it is; a hold's decision goes to the site's reconciliation workflow.
import { z } from 'zod';
import { postIdSchema } from '../links/link.ts';
import { refreshAfterChange } from '../propagation/refresh_after_change.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { ConflictError, NotFoundError, ValidationError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import { lockKeys } from '../stores/link_batch_store.ts';
import { getLinkByCode, updateLink } from '../stores/link_store.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import { endMigrationIfSettled, listSiteInstallations } from '../stores/post_identity_store.ts';
import type { Sql } from '../stores/sql.ts';
import {
  countOpenReviews,
  getReview,
  getReviewForUpdate,
  listReviews,
  REVIEW_KINDS,
  type ReviewRow,
  updateReviewResolved,
} from '../stores/wordpress_review_store.ts';
import { type CanonicalTargetPolicy, checkTarget } from '../targets/target_rule.ts';
import { getBreakerHold, type HoldJson, listBreakerHolds } from './mass_change_breaker.ts';
import { rebindPostLink } from './post_identity.ts';

export const reviewItemSchema = z.object({
  id: z.number().int(),
  site: z.string(),
  kind: z.enum(REVIEW_KINDS),
  postId: z.number().nullable(),
  code: z.string().nullable(),
  permalink: z.string().nullable(),
  candidates: z.array(z.string()),
  detail: z.string(),
  status: z.enum(['open', 'resolved']),
  resolution: z.enum(['bind', 'gone', 'keep']).nullable(),
  resolvedBy: z.string().nullable(),
  resolvedAt: z.string().nullable(),
  createdAt: z.string(),
});
export type ReviewItem = z.infer<typeof reviewItemSchema>;
export const reviewListSchema = z.object({ items: z.array(reviewItemSchema), next: z.number().nullable() });

export const reviewQuerySchema = z.object({
  site: z.string().max(100).optional(),
  status: z.enum(['open', 'resolved']).default('open'),
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/** POST /api/v1/wordpress/reviews/{id}/resolve. */
export const resolveReviewInputSchema = z
  .strictObject({
    action: z.enum(['bind', 'gone', 'keep']),
    /** bind: which code (default: the item's code, or its only candidate). */
    code: z.string().max(64).optional(),
    /** bind: to which post (default: the item's post). */
    postId: postIdSchema.optional(),
  })
  .describe('bind a code to a post, leave the code gone, or keep everything as it is');
export type ResolveReviewInput = z.infer<typeof resolveReviewInputSchema>;

export const wordpressSiteSchema = z.object({
  site: z.string(),
  installationId: z.string().nullable(),
  previousInstallationId: z.string().nullable(),
  installationChangedAt: z.string().nullable(),
  migrating: z.boolean(),
  migratingSince: z.string().nullable(),
  openReviews: z.number().int(),
});
export const wordpressSiteListSchema = z.object({ items: z.array(wordpressSiteSchema) });

export const breakerHoldSchema = z.object({
  id: z.number().int(),
  site: z.string(),
  source: z.enum(['reconcile', 'events']),
  runId: z.string().nullable(),
  status: z.string(),
  budget: z.number().int(),
  siteLinks: z.number().int(),
  counts: z.record(z.string(), z.record(z.string(), z.number())),
  sample: z.array(
    z.object({
      code: z.string(),
      change: z.enum(['retarget', 'gone']),
      postId: z.number().nullable(),
      beforeUrl: z.string(),
      afterUrl: z.string().nullable(),
      beforeStatus: z.string(),
      expectedVersion: z.number(),
      state: z.string().optional(),
    }),
  ),
  decidedBy: z.string().nullable(),
  decidedAt: z.string().nullable(),
  createdAt: z.string(),
});
export const breakerHoldListSchema = z.object({ items: z.array(breakerHoldSchema) });
export const breakerDecisionSchema = z.object({
  id: z.number().int(),
  workflowId: z.string(),
  action: z.enum(['approve', 'discard']),
});

export function toReviewJson(row: ReviewRow): ReviewItem {
  return {
    ...row,
    postId: row.postId === null ? null : Number(row.postId),
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

export async function listReviewItems(
  sql: Sql,
  query: z.infer<typeof reviewQuerySchema>,
): Promise<z.infer<typeof reviewListSchema>> {
  const rows = await listReviews(sql, {
    site: query.site,
    status: query.status,
    limit: query.limit,
    ...(query.after !== undefined ? { afterId: query.after } : {}),
  });
  return {
    items: rows.map(toReviewJson),
    next: rows.length === query.limit ? rows.at(-1)!.id : null,
  };
}

export async function listWordPressSiteStates(sql: Sql): Promise<z.infer<typeof wordpressSiteListSchema>> {
  const sites = await listSiteInstallations(sql);
  return {
    items: await Promise.all(
      sites.map(async (s) => ({
        site: s.site,
        installationId: s.installationId,
        previousInstallationId: s.previousInstallationId,
        installationChangedAt: s.installationChangedAt?.toISOString() ?? null,
        migrating: s.migratingSince !== null,
        migratingSince: s.migratingSince?.toISOString() ?? null,
        openReviews: await countOpenReviews(sql, s.site),
      })),
    ),
  };
}

export interface ResolveDeps {
  sql: Sql;
  logger: Logger;
  resolver: LinkResolver;
  targetPolicy: CanonicalTargetPolicy;
  workflows: { kickSyncQueue(reason: string): Promise<unknown> };
}

/**
 * Resolves one open review item, audited as the admin: `bind` moves the code to the post (detaching whatever
 * held that post ID) and points it at the item's permalink when it has one; `gone` makes the code answer 410
 * (its code kept); `keep` changes nothing. The site leaves migration mode when this was the last open item and
 * a complete reconciliation has run since the switch.
 */
export async function resolveReviewItem(
  deps: ResolveDeps,
  id: number,
  input: ResolveReviewInput,
  by: string,
): Promise<ReviewItem & { migrationEnded: boolean }> {
  const changed = await deps.sql.begin(async (tx) => {
    const item = await getReviewForUpdate(tx, id);
    if (!item) throw new NotFoundError(`No review item ${id}.`);
    if (item.status !== 'open') throw new ConflictError(`Review item ${id} is already resolved.`);
    const reason = `review ${id} (${item.kind}) resolved: ${input.action}`;
    const code = input.code ?? item.code ?? (item.candidates.length === 1 ? item.candidates[0]! : undefined);
    let changedCode: string | null = null;
    if (input.action === 'bind') {
      const postId = input.postId ?? (item.postId === null || item.postId <= 0 ? undefined : item.postId);
      if (!code || postId === undefined) {
        throw new ValidationError(
          [
            ...(code ? [] : [{ path: 'code', message: 'is required for this item' }]),
            ...(postId === undefined ? [{ path: 'postId', message: 'is required for this item' }] : []),
          ],
          'Say which code and which post to bind.',
        );
      }
      await lockKeys(tx, [`post|${item.site}|${postId}`]);
      const link = await getLinkByCode(tx, code);
      if (!link || link.site !== item.site || link.deletedAt) {
        throw new ConflictError(`${code} is not a live link of site ${item.site}; it cannot be bound.`);
      }
      await rebindPostLink(tx, {
        link,
        site: item.site,
        postId,
        actor: by,
        reason,
        matchedBy: 'an admin',
      });
      const target = item.permalink ? checkTarget(item.permalink, deps.targetPolicy) : null;
      if (target?.ok && target.url !== link.targetUrl) {
        await updateLink(tx, code, { targetUrl: target.url });
        await insertAuditEntry(tx, {
          code,
          actor: by,
          action: 'link.retargeted',
          before: { url: link.targetUrl },
          after: { url: target.url },
          reason,
        });
      }
      changedCode = code;
    } else if (input.action === 'gone') {
      if (!code) throw new ValidationError([{ path: 'code', message: 'is required for this item' }]);
      const link = await getLinkByCode(tx, code);
      if (!link || link.site !== item.site)
        throw new ConflictError(`${code} is not a link of site ${item.site}.`);
      if (!link.deletedAt && (link.status === 'active' || link.status === 'pending')) {
        await updateLink(tx, code, { status: 'gone' });
        await insertAuditEntry(tx, {
          code,
          actor: by,
          action: 'link.status_changed',
          before: { status: link.status },
          after: { status: 'gone' },
          reason,
        });
        changedCode = code;
      }
    }
    await updateReviewResolved(tx, id, input.action, by);
    if (changedCode) await enqueueLinkSyncs(tx, [changedCode], reason);
    return { changedCode, site: item.site };
  });
  if (changed.changedCode) {
    await refreshAfterChange(deps, changed.changedCode);
    await deps.workflows
      .kickSyncQueue(`review ${id} resolved`)
      .catch((err: unknown) =>
        deps.logger.warn({ err, id }, 'sync queue not woken after a review; its schedule will'),
      );
  }
  const migrationEnded = await endMigrationIfSettled(deps.sql, changed.site);
  return { ...toReviewJson((await getReview(deps.sql, id))!), migrationEnded };
}

export async function listHolds(
  sql: Sql,
  status: 'waiting' | 'applied' | 'discarded' | undefined,
): Promise<{ items: HoldJson[] }> {
  return { items: await listBreakerHolds(sql, { status }) };
}

/** Hands an admin's decision on a waiting hold to the site's reconciliation workflow. */
export async function requestBreakerDecision(
  deps: {
    sql: Sql;
    adoption: {
      decideWordPressBreaker(input: { site: string; holdId: number; approve: boolean; by: string }): Promise<{
        workflowId: string;
      }>;
    };
  },
  id: number,
  action: 'approve' | 'discard',
  by: string,
): Promise<z.infer<typeof breakerDecisionSchema>> {
  const hold = await getBreakerHold(deps.sql, id);
  if (hold.status !== 'waiting') throw new ConflictError(`Breaker hold ${id} was already ${hold.status}.`);
  const { workflowId } = await deps.adoption.decideWordPressBreaker({
    site: hold.site,
    holdId: id,
    approve: action === 'approve',
    by,
  });
  return { id, workflowId, action };
}
