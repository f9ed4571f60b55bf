import { activityInfo, getClient } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { insertWithMint } from '../lib/links/create_link.ts';
import { targetUrlProblem } from '../lib/links/link.ts';
import { mintCode as drawCode, MINT_MAX_ATTEMPTS } from '../lib/links/mint.ts';
import type { PostEvent } from '../lib/publishing/post_event.ts';
import { insertAuditEntry } from '../lib/stores/audit_store.ts';
import { getLinkByCode, getLinkByPost, updateLink } from '../lib/stores/link_store.ts';
import { getSetting } from '../lib/stores/settings_store.ts';
import type { Tx } from '../lib/stores/sql.ts';
import { deleteVendorLinks } from '../lib/stores/vendor_link_store.ts';
import { insertWebhookDelivery } from '../lib/stores/webhook_delivery_store.ts';
import { signalLinkSync } from '../lib/temporal/workflow_gateway.ts';
import { getPublishWorkflowId } from '../lib/temporal/workflow_ids.ts';
import { type ActivityDeps, refreshCaches } from './deps.ts';

/** Which fronts a first publish must wait for (read once per publish; settings.active_front). */
export interface VendorPlan {
  activeFront: 'inhouse' | 'bitly';
  bitly: boolean;
  /** With the in-house front: how long to wait for Bitly before activating anyway. */
  publishWaitMs: number;
}

export interface MintCodeResult {
  code: string | null;
  /**
   * minted: a new pending link; pending: a pending link from an earlier run; existing: the post's link
   * (already shared); deleted: its link was deleted and never comes back; superseded: a newer unpublish
   * of this post was already seen, so nothing is minted.
   */
  outcome: 'minted' | 'pending' | 'existing' | 'deleted' | 'superseded';
  plan: VendorPlan;
}

export interface PostChangeResult {
  outcome: 'changed' | 'unchanged' | 'stale' | 'deleted' | 'missing';
  /** Which fields changed: url, status, title. */
  changes: string[];
  status?: string;
}

const actorOf = (event: PostEvent) => `wordpress:${event.site}`;

/** Serialises everything that touches one article's link; the (site, post_id) UNIQUE key is the backstop. */
async function lockPost(tx: Tx, site: string, postId: number): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`post|${site}|${postId}`}, 0))`;
}

/** True when `occurredAt` is older than the newest event already applied to the link (out of order). */
async function isStale(tx: Tx, code: string, occurredAt: string): Promise<boolean> {
  const [row] = await tx<{ stale: boolean }[]>`
    SELECT COALESCE(${occurredAt}::timestamptz < source_version, false) AS stale FROM links WHERE code = ${code}`;
  return row?.stale ?? false;
}

/** Post activities: the article side of the publish workflow; idempotent, keyed by site and post id. */
export function createPostActivities(deps: ActivityDeps) {
  async function readPlan(): Promise<VendorPlan> {
    const front = await getSetting<{ active?: string }>(deps.sql, 'active_front');
    return {
      activeFront: front?.active === 'bitly' ? 'bitly' : 'inhouse',
      bitly: deps.vendors?.bitly !== undefined,
      publishWaitMs: deps.vendors?.publishWaitMs ?? 20_000,
    };
  }

  function assertPermalink(event: PostEvent): string {
    const problem = event.permalink === undefined ? 'is missing' : targetUrlProblem(event.permalink);
    if (problem) throw ApplicationFailure.nonRetryable(`permalink ${problem}`, 'BadInput');
    return event.permalink!;
  }

  return {
    /**
     * Mints the article's one code as a `pending` link (not yet shared), or returns the code it already has:
     * a retry, a duplicate delivery or a republish never mints a second one. Also reads the vendor plan.
     */
    async mintCode(event: PostEvent): Promise<MintCodeResult> {
      const permalink = assertPermalink(event);
      const plan = await readPlan();
      return deps.sql.begin(async (tx) => {
        await lockPost(tx, event.site, event.postId);
        const existing = await getLinkByPost(tx, event.site, event.postId);
        if (existing) {
          const outcome = existing.deletedAt
            ? 'deleted'
            : existing.status === 'pending'
              ? 'pending'
              : 'existing';
          return { code: existing.code, outcome, plan };
        }
        // An unpublish newer than this event arrived first (out of order): the post is not public any more.
        const [newer] = await tx`
          SELECT 1 FROM webhook_deliveries
          WHERE site = ${event.site} AND post_id = ${event.postId} AND event = 'post.unpublished'
            AND occurred_at > ${event.occurredAt}::timestamptz
          LIMIT 1`;
        if (newer) return { code: null, outcome: 'superseded', plan };
        const link = await insertWithMint(tx, deps.codeLength, undefined, (code) => ({
          code,
          targetUrl: permalink,
          status: 'pending',
          origin: 'wordpress',
          site: event.site,
          postId: event.postId,
          title: event.title ?? null,
          owner: actorOf(event),
        }));
        // Microsecond precision, as sent: a Date would round it to milliseconds.
        await tx`UPDATE links SET source_version = ${event.occurredAt}::timestamptz WHERE code = ${link.code}`;
        await insertAuditEntry(tx, {
          code: link.code,
          actor: actorOf(event),
          action: 'link.minted',
          after: { url: link.targetUrl, status: link.status, postId: event.postId },
          reason: `${event.event} (delivery ${event.deliveryId})`,
        });
        return { code: link.code, outcome: 'minted', plan };
      });
    },

    /**
     * Applies a published/updated event to the post's existing link, unless a newer event was applied already:
     * a new permalink retargets it; `post.published` brings an unpublished (`gone`) link back with the same
     * code. Postgres only; replicas follow through the link's sync workflow.
     */
    async applyPostUpdate(input: { event: PostEvent; code: string }): Promise<PostChangeResult> {
      const { event } = input;
      const permalink = assertPermalink(event);
      const result = await deps.sql.begin(async (tx): Promise<PostChangeResult> => {
        await lockPost(tx, event.site, event.postId);
        const row = await getLinkByPost(tx, event.site, event.postId);
        if (!row || row.code !== input.code) return { outcome: 'missing', changes: [] };
        if (row.deletedAt) return { outcome: 'deleted', changes: [], status: row.status };
        if (await isStale(tx, row.code, event.occurredAt))
          return { outcome: 'stale', changes: [], status: row.status };
        const changes: string[] = [];
        const nextStatus = event.event === 'post.published' && row.status === 'gone' ? 'active' : row.status;
        if (permalink !== row.targetUrl) changes.push('url');
        if (nextStatus !== row.status) changes.push('status');
        if (event.title !== undefined && event.title !== row.title) changes.push('title');
        await tx`UPDATE links SET source_version = ${event.occurredAt}::timestamptz WHERE code = ${row.code}`;
        if (changes.length === 0) return { outcome: 'unchanged', changes, status: row.status };
        await updateLink(tx, row.code, {
          targetUrl: permalink,
          status: nextStatus,
          ...(event.title !== undefined ? { title: event.title } : {}),
        });
        const reason = `${event.event} (delivery ${event.deliveryId})`;
        if (changes.includes('url')) {
          await insertAuditEntry(tx, {
            code: row.code,
            actor: actorOf(event),
            action: 'link.retargeted',
            before: { url: row.targetUrl },
            after: { url: permalink },
            reason,
          });
        }
        if (changes.includes('status')) {
          await insertAuditEntry(tx, {
            code: row.code,
            actor: actorOf(event),
            action: 'link.status_changed',
            before: { status: row.status },
            after: { status: nextStatus },
            reason,
          });
        }
        return { outcome: 'changed', changes, status: nextStatus };
      });
      if (result.outcome === 'changed') await refreshCaches(deps, input.code);
      return result;
    },

    /**
     * `post.unpublished`: the link answers 410 (`gone`), keeping its code for a republish. With no link yet
     * (the unpublish overtook its publish), the delivery is recorded so the older publish mints nothing.
     */
    async markGone(
      event: PostEvent,
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
            workflowId: getPublishWorkflowId(event.site, event.postId),
          });
          await tx`UPDATE webhook_deliveries SET occurred_at = ${event.occurredAt}::timestamptz
                   WHERE delivery_id = ${event.deliveryId}`;
          return { code: null, outcome: 'no-link' };
        }
        if (row.deletedAt) return { code: row.code, outcome: 'deleted' };
        if (await isStale(tx, row.code, event.occurredAt)) return { code: row.code, outcome: 'stale' };
        await tx`UPDATE links SET source_version = ${event.occurredAt}::timestamptz WHERE code = ${row.code}`;
        // Blocked and expired keep their more specific answers (451, expiry page); they are not live either.
        if (row.status !== 'active' && row.status !== 'pending')
          return { code: row.code, outcome: 'unchanged' };
        await updateLink(tx, row.code, { status: 'gone' });
        await insertAuditEntry(tx, {
          code: row.code,
          actor: actorOf(event),
          action: 'link.status_changed',
          before: { status: row.status },
          after: { status: 'gone' },
          reason: `${event.event} (delivery ${event.deliveryId})`,
        });
        return { code: row.code, outcome: 'changed' };
      });
      if (result.outcome === 'changed' && result.code) await refreshCaches(deps, result.code);
      return result;
    },

    /**
     * Replaces a never-shared (`pending`) code with a fresh one after a vendor refused ours. Refuses to touch a
     * shared code. Idempotent: a retry after a lost result finds the post's new code.
     */
    async remintCode(input: { code: string; site: string; postId: number; reason: string }): Promise<{
      code: string;
      previous: string;
    }> {
      return deps.sql.begin(async (tx) => {
        await lockPost(tx, input.site, input.postId);
        const row = await getLinkByCode(tx, input.code);
        if (!row) {
          const current = await getLinkByPost(tx, input.site, input.postId);
          if (current) return { code: current.code, previous: input.code };
          throw ApplicationFailure.nonRetryable(`no link ${input.code}`, 'BadInput');
        }
        if (row.status !== 'pending') {
          throw ApplicationFailure.nonRetryable(
            `${input.code} was shared (${row.status}); it is never changed`,
            'SharedCode',
          );
        }
        await deleteVendorLinks(tx, input.code);
        for (let attempt = 0; attempt < MINT_MAX_ATTEMPTS; attempt++) {
          const fresh = drawCode(deps.codeLength);
          const [taken] = await tx`SELECT 1 FROM links WHERE code = ${fresh}`;
          if (taken) continue;
          await tx`UPDATE links SET code = ${fresh}, updated_at = now(), version = version + 1 WHERE code = ${input.code}`;
          await insertAuditEntry(tx, {
            code: fresh,
            actor: 'system:publish',
            action: 'link.reminted',
            before: { code: input.code },
            after: { code: fresh },
            reason: input.reason,
          });
          return { code: fresh, previous: input.code };
        }
        throw ApplicationFailure.retryable('no free code; will try again', 'MintExhausted');
      });
    },

    /** Marks a pending link active: from now on the code is shared and never changes. */
    async markActive(input: { code: string; reason: string }): Promise<{ status: string }> {
      const status = await deps.sql.begin(async (tx) => {
        const before = await getLinkByCode(tx, input.code);
        if (!before) throw ApplicationFailure.nonRetryable(`no link ${input.code}`, 'BadInput');
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
        return 'active';
      });
      await deps.resolver.refresh(input.code);
      return { status };
    },

    /** Hands a changed link to its sync workflow (`sync:{code}`): serving store, caches and vendors follow. */
    async requestLinkSync(input: { code: string; reason: string }): Promise<{ workflowId: string }> {
      await signalLinkSync(getClient().workflow, activityInfo().taskQueue, input.code, input.reason);
      return { workflowId: `sync:${input.code}` };
    },
  };
}
