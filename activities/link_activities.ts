import { ApplicationFailure } from '@temporalio/common';
import { insertWithMint } from '../lib/links/create_link.ts';
import { targetUrlProblem } from '../lib/links/link.ts';
import { insertAuditEntry } from '../lib/stores/audit_store.ts';
import { getLinkByCode, getLinkByPost, updateLink } from '../lib/stores/link_store.ts';
import type { PublishPostInput } from '../workflows/publish_post.ts';
import type { ActivityDeps } from './deps.ts';

/** Link activities: thin, idempotent wrappers over lib/ (the workflow ID is the idempotency key). */
export function createLinkActivities(deps: ActivityDeps) {
  return {
    /**
     * Mints the article's one code, or returns the code it already has (so a retry, a duplicate delivery
     * or a republish never mints a second one). A new link starts `pending` until the workflow activates it.
     */
    async mintPostLink(input: PublishPostInput): Promise<{ code: string; created: boolean }> {
      const problem = targetUrlProblem(input.permalink);
      if (problem) throw ApplicationFailure.nonRetryable(`permalink ${problem}`, 'BadInput');
      return deps.sql.begin(async (tx) => {
        // Serialise concurrent mints for one article; the (site, post_id) UNIQUE key is the backstop.
        await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`post|${input.site}|${input.postId}`}, 0))`;
        const existing = await getLinkByPost(tx, input.site, input.postId);
        if (existing) return { code: existing.code, created: false };
        const link = await insertWithMint(tx, deps.codeLength, undefined, (code) => ({
          code,
          targetUrl: input.permalink,
          status: 'pending',
          origin: 'wordpress',
          site: input.site,
          postId: input.postId,
          title: input.title ?? null,
          owner: `wordpress:${input.site}`,
          sourceVersion: new Date(input.occurredAt),
        }));
        await insertAuditEntry(tx, {
          code: link.code,
          actor: `wordpress:${input.site}`,
          action: 'link.minted',
          after: { url: link.targetUrl, status: link.status, postId: input.postId },
          reason: `delivery ${input.deliveryId}`,
        });
        return { code: link.code, created: true };
      });
    },

    /** Marks a pending (or unpublished) link active; a no-op when it already is, or when it is blocked or deleted. */
    async activateLink(input: { code: string; reason: string }): Promise<{ status: string }> {
      const changed = await deps.sql.begin(async (tx) => {
        const before = await getLinkByCode(tx, input.code);
        if (!before) throw ApplicationFailure.nonRetryable(`no link ${input.code}`, 'BadInput');
        if (before.deletedAt || !['pending', 'gone'].includes(before.status)) return before.status;
        await updateLink(tx, input.code, { status: 'active' });
        await insertAuditEntry(tx, {
          code: input.code,
          actor: 'system:publish',
          action: 'link.status_changed',
          before: { status: before.status },
          after: { status: 'active' },
          reason: input.reason,
        });
        return 'active';
      });
      await deps.resolver.refresh(input.code);
      return { status: changed };
    },

    /** Brings every cached copy of a link (in-process caches, serving store) up to date with Postgres. */
    async purgeLinkCaches(input: { code: string }): Promise<void> {
      await deps.resolver.refresh(input.code);
    },
  };
}
