// How a WordPress post's events change its one link (the publish workflow's steps, workflows/publish_post.ts):
// mint a pending code, apply an update, retire it when unpublished, re-mint a code a vendor refused before it
// was shared, and activate it. Every step is idempotent and serialised per article (lockPost).
import { queueArchiveCopies } from '../archive/archive_queue.ts';
import { type Front, getActiveFront } from '../failover/active_front.ts';
import { insertWithMint } from '../links/create_link.ts';
import { mintOneCode } from '../links/mint.ts';
import { refreshAfterChange } from '../propagation/refresh_after_change.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { PermanentFailure, TransientFailure } from '../shared/errors.ts';
import { DEFAULT_DOMAIN, keyCode, keyDomain, linkKey } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { getLinkByCode, getLinkByPost, updateLink } from '../stores/link_store.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import { upsertPostGuid } from '../stores/post_identity_store.ts';
import {
  hasNewerUnpublish,
  isOlderThanSourceVersion,
  lockPost,
  updateDeliveryOccurredAt,
  updateLinkCode,
  updateSourceVersion,
} from '../stores/post_link_store.ts';
import type { Sql, Tx } from '../stores/sql.ts';
import { deleteVendorLinks } from '../stores/vendor_link_store.ts';
import { insertWebhookDelivery } from '../stores/webhook_delivery_store.ts';
import { linkEventData, recordWebhookEvent } from '../stores/webhook_outbox_store.ts';
import { getSiteDomain } from '../stores/wordpress_site_domain_store.ts';
import { type CanonicalTargetPolicy, checkTarget } from '../targets/target_rule.ts';
import { bitlyForKey, type VendorDeps } from '../vendors/vendor_deps.ts';
import {
  type BreakerSettings,
  holdChanges,
  lockBudget,
  readBudget,
  spendBudget,
} from './mass_change_breaker.ts';
import type { PostEvent } from './post_event.ts';
import { fileReview, isMigrating, settlePostIdentity } from './post_identity.ts';

export interface PostLifecycleDeps {
  sql: Sql;
  logger: Logger;
  codeLength: number;
  resolver: LinkResolver;
  /** Where targets may point (ALLOWED_TARGET_HOSTS, not the short domain): permalinks obey it too. */
  targetPolicy: CanonicalTargetPolicy;
  vendors?: Pick<VendorDeps, 'bitly' | 'bitlyByDomain' | 'publishWaitMs'> | undefined;
  /** The breaker on mass change (WORDPRESS_BREAKER_SHARE, WORDPRESS_BREAKER_MIN); absent: the defaults. */
  wordpressBreaker?: BreakerSettings | undefined;
  /**
   * ARCHIVE_MODE is not off: a minted or retargeted article is queued for an archived copy (ADR 0076), which the
   * drainer skips when the permalink is on one of our own hosts, as an article's usually is.
   */
  archiveCopies?: boolean | undefined;
}

/** Which fronts a first publish must wait for (read once per publish from the active-front setting). */
export interface VendorPlan {
  activeFront: Front;
  bitly: boolean;
  /** With the in-house front: how long to wait for Bitly before activating anyway. */
  publishWaitMs: number;
}

export interface MintPostCodeResult {
  code: string | null;
  /**
   * minted: a new pending link; pending: a pending link from an earlier run; existing: the post's link
   * (already shared); deleted: its link was deleted and never comes back; superseded: a newer unpublish
   * of this post was already seen, so nothing is minted; conflict: the post's identity is filed for review
   * (ADR 0057) and nothing changes (code null).
   */
  outcome: 'minted' | 'pending' | 'existing' | 'deleted' | 'superseded' | 'conflict';
  plan: VendorPlan;
}

export interface PostChangeResult {
  /** held: the breaker on mass change kept it for an admin's decision (ADR 0057); conflict: filed for review. */
  outcome: 'changed' | 'unchanged' | 'stale' | 'deleted' | 'missing' | 'held' | 'conflict';
  /** Which fields changed: url, status, expiry, title. */
  changes: string[];
  status?: string;
}

const actorOf = (event: PostEvent) => `wordpress:${event.site}`;
const reasonOf = (event: PostEvent) => `${event.event} (delivery ${event.deliveryId})`;

/** The plan of a link's key (absent: the default short domain's): its domain's front and Bitly replica (ADR 0073). */
async function readPlan(deps: PostLifecycleDeps, key?: string): Promise<VendorPlan> {
  const domain = key === undefined ? DEFAULT_DOMAIN : keyDomain(key);
  return {
    activeFront: (await getActiveFront(deps.sql, domain)).active,
    bitly: (key === undefined ? deps.vendors?.bitly : bitlyForKey(deps.vendors, key)) !== undefined,
    publishWaitMs: deps.vendors?.publishWaitMs ?? 20_000,
  };
}

/**
 * The event's permalink in canonical form, under the same rule as every other target. The web tier checked it
 * before starting the workflow; an event recorded in a history before that check, or a policy tightened since,
 * fails here for good (nothing is written).
 */
function requirePermalink(event: PostEvent, policy: CanonicalTargetPolicy): string {
  if (event.permalink === undefined) throw new PermanentFailure('permalink is missing');
  const checked = checkTarget(event.permalink, policy);
  if (!checked.ok) throw new PermanentFailure(`permalink ${checked.problem}`);
  return checked.url;
}

/**
 * Mints the article's one code as a `pending` link (not yet shared), or returns the code it already has:
 * a retry, a duplicate delivery or a republish never mints a second one. Also reads the vendor plan.
 */
export async function mintCode(deps: PostLifecycleDeps, event: PostEvent): Promise<MintPostCodeResult> {
  const permalink = requirePermalink(event, deps.targetPolicy);
  const result = await deps.sql.begin(async (tx) => {
    await lockPost(tx, event.site, event.postId);
    // The post's claim to its code outranks its post ID (ADR 0057): a moved post keeps its code.
    const identity = await settlePostIdentity(
      tx,
      { ...event, permalink },
      { migrating: await isMigrating(tx, event.site), actor: actorOf(event), reason: reasonOf(event) },
    );
    if (identity.kind === 'conflict') {
      await fileReview(tx, identity.review);
      return { code: null, outcome: 'conflict' as const };
    }
    const existing = identity.link;
    if (existing) {
      const outcome: MintPostCodeResult['outcome'] = existing.deletedAt
        ? 'deleted'
        : existing.status === 'pending'
          ? 'pending'
          : 'existing';
      return { code: existing.code, outcome };
    }
    // An unpublish newer than this event arrived first (out of order): the post is not public any more.
    if (await hasNewerUnpublish(tx, event)) return { code: null, outcome: 'superseded' as const };
    // In the short domain the site is mapped to (ADR 0078; the default unless an admin chose another).
    const domain = await getSiteDomain(tx, event.site);
    const link = await insertWithMint(tx, deps.codeLength, undefined, domain, (key) => ({
      code: key,
      targetUrl: permalink,
      status: 'pending',
      origin: 'wordpress',
      site: event.site,
      postId: event.postId,
      title: event.title ?? null,
      owner: actorOf(event),
    }));
    await updateSourceVersion(tx, link.code, event.occurredAt);
    if (event.guid) await upsertPostGuid(tx, link.code, event.site, event.guid);
    await insertAuditEntry(tx, {
      code: link.code,
      actor: actorOf(event),
      action: 'link.minted',
      after: { url: link.targetUrl, status: link.status, postId: event.postId },
      reason: reasonOf(event),
    });
    await queueArchiveCopies(tx, deps, [link.code], reasonOf(event));
    return { code: link.code, outcome: 'minted' as const };
  });
  // The vendor plan of the link's own short domain: its front and its Bitly replica.
  return { ...result, plan: await readPlan(deps, result.code ?? undefined) };
}

/**
 * Applies a published/updated event to the post's existing link, unless a newer event was applied already:
 * a new permalink retargets it; `post.published` brings an unpublished (`gone`) link back with the same
 * code. Postgres (and this process's caches); replicas follow through the link's sync workflow, or with
 * `queueSync` through the sync queue, its row written in the change's own transaction (ADR 0098).
 */
export async function applyPostUpdate(
  deps: PostLifecycleDeps,
  input: { event: PostEvent; code: string; queueSync?: boolean },
): Promise<PostChangeResult> {
  const { event } = input;
  const permalink = requirePermalink(event, deps.targetPolicy);
  const result = await deps.sql.begin(async (tx): Promise<PostChangeResult> => {
    await lockPost(tx, event.site, event.postId);
    const row = await getLinkByPost(tx, event.site, event.postId);
    if (!row || row.code !== input.code) return { outcome: 'missing', changes: [] };
    if (row.deletedAt) return { outcome: 'deleted', changes: [], status: row.status };
    if (await isOlderThanSourceVersion(tx, row.code, event.occurredAt))
      return { outcome: 'stale', changes: [], status: row.status };
    const changes: string[] = [];
    // Both events say the post is public: a passed expiry (fired or not) must not keep its readers from it, nor
    // send them to a fallback elsewhere; the expiry and its fallback go with it (reconciliation does the same).
    const pastExpiry = row.expiresAt !== null && row.expiresAt.getTime() <= Date.now();
    const expired = row.status === 'expired' || (row.status === 'active' && pastExpiry);
    const nextStatus =
      (event.event === 'post.published' && row.status === 'gone') || expired ? 'active' : row.status;
    if (permalink !== row.targetUrl) changes.push('url');
    if (nextStatus !== row.status) changes.push('status');
    if (expired) changes.push('expiry');
    if (event.title !== undefined && event.title !== row.title) changes.push('title');
    if (changes.includes('url') && !(await spendOrHold(deps, tx, event, row, 'retarget', permalink)))
      return { outcome: 'held', changes: [], status: row.status };
    await updateSourceVersion(tx, row.code, event.occurredAt);
    if (changes.length === 0) return { outcome: 'unchanged', changes, status: row.status };
    const updated = await updateLink(tx, row.code, {
      targetUrl: permalink,
      status: nextStatus,
      ...(expired ? { expiresAt: null, expiredUrl: null } : {}),
      ...(event.title !== undefined ? { title: event.title } : {}),
    });
    // Integrators hear of a WordPress-driven change as they hear of an editor's (same event, same shape).
    if (updated)
      await recordWebhookEvent(tx, 'link.updated', {
        ...linkEventData(updated),
        changed: changes,
        site: event.site,
        postId: event.postId,
      });
    if (expired) {
      await insertAuditEntry(tx, {
        code: row.code,
        actor: actorOf(event),
        action: 'link.updated',
        before: { expiresAt: row.expiresAt?.toISOString() ?? null, expiredUrl: row.expiredUrl },
        after: { expiresAt: null, expiredUrl: null },
        reason: reasonOf(event),
      });
    }
    if (changes.includes('url')) {
      await insertAuditEntry(tx, {
        code: row.code,
        actor: actorOf(event),
        action: 'link.retargeted',
        before: { url: row.targetUrl },
        after: { url: permalink },
        reason: reasonOf(event),
      });
      await queueArchiveCopies(tx, deps, [row.code], reasonOf(event));
    }
    if (changes.includes('status')) {
      await insertAuditEntry(tx, {
        code: row.code,
        actor: actorOf(event),
        action: 'link.status_changed',
        before: { status: row.status },
        after: { status: nextStatus },
        reason: reasonOf(event),
      });
    }
    if (input.queueSync)
      await enqueueLinkSyncs(tx, [row.code], `${event.event}: ${changes.join(', ')} changed`);
    return { outcome: 'changed', changes, status: nextStatus };
  });
  if (result.outcome === 'changed') await refreshAfterChange(deps, input.code);
  return result;
}

/**
 * `post.unpublished`: the link answers 410 (`gone`), keeping its code for a republish. With no link yet
 * (the unpublish overtook its publish), the delivery is recorded so the older publish mints nothing.
 */
export async function markGone(
  deps: PostLifecycleDeps,
  event: PostEvent & { workflowId: string },
  options: { queueSync?: boolean } = {},
): Promise<{ code: string | null; outcome: PostChangeResult['outcome'] | 'no-link' }> {
  type Marked = { code: string | null; outcome: PostChangeResult['outcome'] | 'no-link' };
  const result = await deps.sql.begin(async (tx): Promise<Marked> => {
    await lockPost(tx, event.site, event.postId);
    const row = await getLinkByPost(tx, event.site, event.postId);
    if (!row) {
      await insertWebhookDelivery(tx, {
        deliveryId: event.deliveryId,
        site: event.site,
        postId: event.postId,
        event: event.event,
        occurredAt: new Date(event.occurredAt),
        workflowId: event.workflowId,
      });
      await updateDeliveryOccurredAt(tx, event.deliveryId, event.occurredAt);
      return { code: null, outcome: 'no-link' };
    }
    if (row.deletedAt) return { code: row.code, outcome: 'deleted' };
    if (await isOlderThanSourceVersion(tx, row.code, event.occurredAt))
      return { code: row.code, outcome: 'stale' };
    // A post ID reused by another article, or one whose claim names another code, never takes a code down.
    if (
      (event.knownCode !== undefined && keyCode(row.code) !== event.knownCode) ||
      (event.knownCode === undefined && (await isMigrating(tx, event.site)))
    ) {
      await fileReview(tx, {
        site: event.site,
        kind: event.knownCode !== undefined ? 'claim-conflict' : 'reused-post-id',
        postId: event.postId,
        code: row.code,
        detail: `post ${event.postId} was unpublished ${event.knownCode !== undefined ? `claiming ${event.knownCode}` : 'without a claim during migration mode'}; ${row.code} was left as it is`,
      });
      return { code: row.code, outcome: 'conflict' };
    }
    // Blocked and expired keep their more specific answers (451, expiry page); they are not live either.
    if (row.status !== 'active' && row.status !== 'pending') {
      await updateSourceVersion(tx, row.code, event.occurredAt);
      return { code: row.code, outcome: 'unchanged' };
    }
    if (!(await spendOrHold(deps, tx, event, row, 'gone', null))) return { code: row.code, outcome: 'held' };
    await updateSourceVersion(tx, row.code, event.occurredAt);
    const gone = await updateLink(tx, row.code, { status: 'gone' });
    if (gone)
      await recordWebhookEvent(tx, 'link.updated', {
        ...linkEventData(gone),
        changed: ['status'],
        site: event.site,
        postId: event.postId,
      });
    await insertAuditEntry(tx, {
      code: row.code,
      actor: actorOf(event),
      action: 'link.status_changed',
      before: { status: row.status },
      after: { status: 'gone' },
      reason: reasonOf(event),
    });
    if (options.queueSync) await enqueueLinkSyncs(tx, [row.code], `post ${event.postId} unpublished`);
    return { code: row.code, outcome: 'changed' };
  });
  if (result.outcome === 'changed' && result.code) await refreshAfterChange(deps, result.code);
  return result;
}

/**
 * The breaker on the event path (ADR 0057): counts one retarget or gone against the site's hourly budget, or,
 * with the budget spent, keeps the change in the site's hold of post events for an admin (false).
 */
async function spendOrHold(
  deps: PostLifecycleDeps,
  tx: Tx,
  event: PostEvent,
  row: LinkRow,
  change: 'retarget' | 'gone',
  afterUrl: string | null,
): Promise<boolean> {
  await lockBudget(tx, event.site);
  const budget = await readBudget(tx, event.site, deps.wordpressBreaker);
  if (budget.remaining >= 1) {
    await spendBudget(tx, event.site, 1);
    return true;
  }
  const hold = await holdChanges(
    tx,
    { site: event.site, source: 'events', runId: null, workflowId: null },
    budget,
    [
      {
        code: row.code,
        change,
        postId: event.postId,
        beforeUrl: row.targetUrl,
        afterUrl,
        beforeStatus: row.status,
        expectedVersion: row.version,
      },
    ],
  );
  deps.logger.warn(
    { site: event.site, code: row.code, change, holdId: hold.id },
    'WordPress breaker: the hourly budget is spent; the change waits for an admin',
  );
  return false;
}

/**
 * Replaces a never-shared (`pending`) code with a fresh one after a vendor refused ours. Refuses to touch a
 * shared code. Idempotent: a retry after a lost result finds the post's new code.
 */
export async function remintCode(
  deps: PostLifecycleDeps,
  input: { code: string; site: string; postId: number; reason: string },
): Promise<{ code: string; previous: string }> {
  return deps.sql.begin(async (tx) => {
    await lockPost(tx, input.site, input.postId);
    const row = await getLinkByCode(tx, input.code);
    if (!row) {
      const current = await getLinkByPost(tx, input.site, input.postId);
      if (current) return { code: current.code, previous: input.code };
      throw new PermanentFailure(`no link ${input.code}`);
    }
    if (row.status !== 'pending') {
      throw new PermanentFailure(
        `${input.code} was shared (${row.status}); it is never changed`,
        'SharedCode',
      );
    }
    await deleteVendorLinks(tx, input.code);
    // A fresh code on the link's own short domain: the key keeps its domain (ADR 0078).
    const domain = keyDomain(input.code);
    const { claimed: code } = await mintOneCode<string>({
      codeLength: deps.codeLength,
      claim: async (fresh) =>
        (await updateLinkCode(tx, input.code, linkKey(domain, fresh)))
          ? { claimed: linkKey(domain, fresh) }
          : { taken: true },
      aliasTaken: () => new PermanentFailure('a re-mint never uses an alias'),
      exhausted: () => new TransientFailure('no free code; will try again', 'MintExhausted'),
    });
    await insertAuditEntry(tx, {
      code,
      actor: 'system:publish',
      action: 'link.reminted',
      before: { code: input.code },
      after: { code },
      reason: input.reason,
    });
    return { code, previous: input.code };
  });
}

/** Marks a pending link active: from now on the code is shared and never changes. */
export async function markActive(
  deps: PostLifecycleDeps,
  input: { code: string; reason: string },
): Promise<{ status: string }> {
  const status = await deps.sql.begin(async (tx) => {
    const before = await getLinkByCode(tx, input.code);
    if (!before) throw new PermanentFailure(`no link ${input.code}`);
    if (before.deletedAt || before.status !== 'pending') return before.status;
    await updateLink(tx, input.code, { status: 'active' });
    await insertAuditEntry(tx, {
      code: input.code,
      actor: 'system:publish',
      action: 'link.status_changed',
      before: { status: 'pending' },
      after: { status: 'active' },
      reason: input.reason,
    });
    // A post's link is announced when it is shared, not while it is being minted.
    await recordWebhookEvent(tx, 'link.created', {
      ...linkEventData({ ...before, status: 'active' }),
      site: before.site,
      postId: before.postId,
    });
    // Served before it is shown: the serving store and every LRU learn the active record inside the
    // transaction, so whoever reads "active" from the API or a webhook finds the code answering. Should the
    // commit fail, the code answers a little early; nobody has been given it, and the retry commits.
    await deps.resolver.refresh(input.code, tx);
    return 'active';
  });
  await deps.resolver.refresh(input.code);
  return { status };
}
