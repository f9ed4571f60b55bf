// Acting on what the destination checks concluded about a link's destination (docs/OPERATIONS.md, "Dead
// destinations and archived copies"). The policy is the link's own (links.dead_policy), else its host's
// (destination_host_policies), else `notify`:
//   dead   + fallback: the link answers its archived copy (audited; lifted when a later check says ok);
//   dead   + notify:   nothing changes for readers; editors see it in the queue;
//   moved  on one of our own hosts: a retarget to the new URL is proposed (applied at once when
//          DEAD_MOVED_AUTO_RETARGET allows); `off`: nothing at all.
// A link bound to a WordPress post is never switched to a copy or retargeted here: WordPress says whether the
// post is published and where it lives, so a dead or moved article starts that post's WordPress reconciliation.
import { createOwnHostTest, destinationHost } from '../archive/own_hosts.ts';
import type { EditLinkDeps } from '../links/edit_link.ts';
import type { Logger } from '../shared/logger.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import {
  applyLinkFallback,
  clearLinkFallback,
  type DeadPolicy,
  getDeadPolicies,
  getDestinationState,
  setProposedUrl,
} from '../stores/destination_state_store.ts';
import { getLinkByCode } from '../stores/link_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { LinkSyncRequester } from '../temporal/link_sync.ts';
import { applyProposedRetarget } from './apply_proposed_retarget.ts';

export interface DestinationDeps {
  sql: Sql;
  logger: Logger;
  /** Carries a changed link to every copy (sync:{code}). */
  sync: LinkSyncRequester;
  /** Starts one post's WordPress reconciliation (lib/reconcile/reconcile_wordpress_post.ts). */
  wordpress: {
    requestWordPressPostReconcile(input: {
      site: string;
      postId: number;
      code: string;
      reason: string;
    }): Promise<unknown>;
  };
  destinations: { ownHosts: readonly string[]; autoRetargetMoved: boolean };
  /** What an automatic retarget needs (the same edit an editor's click makes). */
  edit: Omit<EditLinkDeps, 'sql' | 'logger' | 'workflows'>;
}

export type DestinationAction =
  | 'none'
  | 'fallback_applied'
  | 'fallback_lifted'
  | 'no_copy'
  | 'wordpress_reconcile'
  | 'retarget_proposed'
  | 'retargeted';

/** The policy that applies: the link's own, else its host's, else `notify`. */
export function effectiveDeadPolicy(
  linkPolicy: DeadPolicy | null,
  hostPolicy: DeadPolicy | null,
): DeadPolicy {
  return linkPolicy ?? hostPolicy ?? 'notify';
}

/**
 * Acts on `code`'s current verdict (called after each check that wrote one). Idempotent: acting twice on the
 * same verdict changes nothing the second time. `actor` is the audit log's `system:<workflow>`.
 */
export async function actOnDestination(
  deps: DestinationDeps,
  input: { code: string; actor?: string },
): Promise<{ action: DestinationAction; policy: DeadPolicy | null }> {
  const actor = input.actor ?? 'system:destination-checks';
  const link = await getLinkByCode(deps.sql, input.code);
  const state = await getDestinationState(deps.sql, input.code);
  if (!link || link.deletedAt || !state || state.url !== link.targetUrl)
    return { action: 'none', policy: null };
  const { linkPolicy, hostPolicy } = await getDeadPolicies(deps.sql, link.code, state.host);
  const policy = effectiveDeadPolicy(linkPolicy, hostPolicy);

  if (state.verdict === 'ok') {
    // Alive again: the link answers its destination, and a proposal for a move is moot.
    if (state.proposedUrl)
      await setProposedUrl(deps.sql, { code: link.code, url: state.url, proposedUrl: null });
    if (!link.fallbackUrl) return { action: 'none', policy };
    await liftFallback(deps, link.code, actor, 'the destination answers again');
    return { action: 'fallback_lifted', policy };
  }
  if (link.fallbackUrl && policy !== 'fallback') {
    // The policy changed away from `fallback` (on the link or its host): the link answers its target again.
    await liftFallback(deps, link.code, actor, `dead-destination policy is now ${policy}`);
    return { action: 'fallback_lifted', policy };
  }
  if (state.verdict !== 'dead' && state.verdict !== 'moved') return { action: 'none', policy };
  if (policy === 'off') return { action: 'none', policy };

  if (link.site !== null && link.postId !== null) {
    // WordPress is the tie-breaker for its posts: that post's reconciliation asks it whether the post is
    // published, and where, and repairs the link (or marks it gone) as WordPress says. Never a copy: while
    // WordPress says the post is published, the link answers the post.
    await deps.wordpress.requestWordPressPostReconcile({
      site: link.site,
      postId: link.postId,
      code: link.code,
      reason: `destination of ${link.code} (post ${link.postId}) is ${state.verdict}`,
    });
    return { action: 'wordpress_reconcile', policy };
  }

  if (state.verdict === 'moved') {
    const moved = state.finalUrl;
    const movedHost = moved ? destinationHost(moved) : null;
    const isOwn = createOwnHostTest(deps.destinations.ownHosts);
    if (!moved || !movedHost || !isOwn(movedHost) || moved === link.targetUrl)
      return { action: 'none', policy };
    await setProposedUrl(deps.sql, { code: link.code, url: state.url, proposedUrl: moved });
    if (!deps.destinations.autoRetargetMoved) return { action: 'retarget_proposed', policy };
    await applyProposedRetarget(
      { ...deps.edit, sql: deps.sql, logger: deps.logger, workflows: deps.sync },
      { code: link.code, actor },
    );
    return { action: 'retargeted', policy };
  }

  // Dead.
  if (policy !== 'fallback') return { action: 'none', policy };
  if (!state.archiveUrl) return { action: 'no_copy', policy };
  const archiveUrl = state.archiveUrl;
  const applied = await deps.sql.begin(async (tx) => {
    const changed = await applyLinkFallback(tx, { code: link.code, url: link.targetUrl, archiveUrl });
    if (changed) {
      await insertAuditEntry(tx, {
        code: link.code,
        actor,
        action: 'link.fallback_applied',
        before: { url: link.targetUrl },
        after: { url: link.targetUrl, fallbackUrl: archiveUrl },
        reason: `destination dead (${state.outcome ?? 'dead'}); policy fallback`,
      });
    }
    return changed;
  });
  if (!applied) return { action: 'none', policy };
  await deps.sync.syncLink(link.code, `link.fallback_applied by ${actor}`);
  return { action: 'fallback_applied', policy };
}

/** Lifts a link's fallback (audited) and carries the change to every copy. False when it had none. */
export async function liftFallback(
  deps: Pick<DestinationDeps, 'sql' | 'sync'>,
  code: string,
  actor: string,
  reason: string,
): Promise<boolean> {
  const lifted = await deps.sql.begin(async (tx) => {
    const before = await getLinkByCode(tx, code);
    const changed = await clearLinkFallback(tx, code);
    if (changed) {
      await insertAuditEntry(tx, {
        code,
        actor,
        action: 'link.fallback_lifted',
        before: { fallbackUrl: before?.fallbackUrl ?? null },
        after: { fallbackUrl: null },
        reason,
      });
    }
    return changed;
  });
  if (lifted) await deps.sync.syncLink(code, `link.fallback_lifted by ${actor}`);
  return lifted;
}
