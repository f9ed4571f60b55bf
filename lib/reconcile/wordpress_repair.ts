// A page's repairs: retargets, restores and gones in one transaction, missing links minted, then propagated.
import { mintCodes } from '../links/mint.ts';
import { firstSafety, newPostLink } from '../links/new_post_link.ts';
import { refreshLinks } from '../propagation/refresh_links.ts';
import { spendBudget } from '../publishing/mass_change_breaker.ts';
import type { ScanResult } from '../safety/scan_result.ts';
import { ConflictError } from '../shared/errors.ts';
import { type BackfilledLink, insertAuditEntries, insertBackfilledLinks } from '../stores/backfill_store.ts';
import { lockKeys } from '../stores/link_batch_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import { type LinkBatchChange, updateLinksBatch } from '../stores/wordpress_reconcile_store.ts';
import { newTargetProblem } from '../targets/new_target_problem.ts';
import { holdIfOverBudget, toHeldChange } from './wordpress_hold.ts';
import type { ListedPost } from './wordpress_listing.ts';
import { keyOf, type WordPressReconcileDeps, type WordPressSiteInput } from './wordpress_pass.ts';

export interface Planned {
  link: LinkRow;
  post: ListedPost;
  change: 'retarget' | 'restore' | 'retarget+restore' | 'gone';
  /** A restore that also drops a passed expiry (and its fallback), so no timer takes the article away again. */
  clearExpiry?: boolean;
}

/** Applies a page's repairs; returns the keys repaired. */
export async function repair(
  deps: WordPressReconcileDeps,
  input: WordPressSiteInput,
  allPlanned: Planned[],
  missing: ListedPost[],
  fetchedAt: Date,
): Promise<string[]> {
  const { site } = input;
  const actor = `wordpress:${site}`;
  const reason = `wordpress reconciliation ${input.runId}`;
  // The breaker: retargets and gones beyond the site's budget wait for an admin, with every later one of the run.
  const counted = allPlanned.filter((p) => p.change !== 'restore');
  const held = await holdIfOverBudget(
    deps,
    input,
    counted.map((p) => toHeldChange(p.link, p.change === 'gone' ? 'gone' : 'retarget', p.post.permalink)),
  );
  const planned = held ? allPlanned.filter((p) => p.change === 'restore') : allPlanned;
  // New destinations pass the same rules as every other way in, and are scanned (outside the transaction).
  const needScan = [
    ...planned.filter((p) => p.change.startsWith('retarget')).map((p) => p.post),
    ...missing,
  ].filter((p) => {
    const problem = newTargetProblem(p.permalink, deps.targetPolicy);
    if (problem)
      deps.logger.warn({ site, postId: p.postId, problem }, 'WordPress permalink refused as a target');
    return problem === null;
  });
  const scanned = needScan.length > 0 ? await deps.safety.scanMany(needScan.map((p) => p.permalink)) : [];
  const scans = new Map<number, ScanResult>(needScan.map((p, i) => [p.postId, scanned[i]!]));
  const checkedAt = new Date();

  const result = await deps.sql.begin(async (tx) => {
    await lockKeys(
      tx,
      [...planned.map((p) => p.post.postId), ...missing.map((p) => p.postId)].map(
        (id) => `post|${site}|${id}`,
      ),
    );
    const changes: LinkBatchChange[] = [];
    const audits: Parameters<typeof insertAuditEntries>[1] = [];
    const keys: string[] = [];
    for (const p of planned) {
      // Changed since WordPress was read (a webhook, an editor): the next run decides.
      if (p.link.updatedAt.getTime() > fetchedAt.getTime()) continue;
      const change: LinkBatchChange = { code: p.link.code, expectedVersion: p.link.version };
      if (p.change === 'gone') change.status = 'gone';
      if (p.change.includes('restore') && p.link.status !== 'active') change.status = 'active';
      if (p.clearExpiry) change.clearExpiry = true;
      if (p.change.startsWith('retarget')) {
        const scan = scans.get(p.post.postId);
        if (!scan || scan.verdict === 'blocked') continue;
        change.targetUrl = p.post.permalink;
        Object.assign(change, firstSafety(scan, checkedAt));
        audits.push({
          code: p.link.code,
          actor,
          action: 'link.retargeted',
          before: { url: p.link.targetUrl },
          after: { url: p.post.permalink },
          reason,
        });
      }
      if (change.status || change.clearExpiry) {
        const expiry = change.clearExpiry
          ? {
              before: { expiresAt: p.link.expiresAt?.toISOString() ?? null, expiredUrl: p.link.expiredUrl },
              after: { expiresAt: null, expiredUrl: null },
            }
          : { before: {}, after: {} };
        audits.push({
          code: p.link.code,
          actor,
          action: change.status ? 'link.status_changed' : 'link.updated',
          before: { status: p.link.status, ...expiry.before },
          after: { status: change.status ?? p.link.status, ...expiry.after },
          reason,
        });
      }
      changes.push(change);
    }
    const updated = await updateLinksBatch(tx, changes);
    const updatedCodes = new Set(updated.map((r) => r.code));
    await spendBudget(
      tx,
      site,
      planned.filter((p) => p.change !== 'restore' && updatedCodes.has(p.link.code)).length,
    );
    for (const p of planned) if (updatedCodes.has(p.link.code)) keys.push(keyOf(site, p.post.postId));
    await insertAuditEntries(
      tx,
      audits.filter((a) => updatedCodes.has(a.code)),
    );

    // Published posts without a link (missed webhooks): minted now, active (blocked ones stay pending).
    const creatable = missing.filter((p) => scans.has(p.postId));
    const toNew = (post: ListedPost, code: string): BackfilledLink =>
      newPostLink(post, code, scans.get(post.postId)!, checkedAt);
    const created: LinkRow[] = [];
    await mintCodes(creatable, {
      codeLength: deps.codeLength,
      claim: async (round) => {
        const rows = await insertBackfilledLinks(
          tx,
          site,
          round.map((r) => toNew(r.claimant, r.code)),
          { actor, reason },
        );
        created.push(...rows);
        const byCode = new Set(rows.map((r) => r.code));
        return round.map((r) => (byCode.has(r.code) ? { claimed: r.code } : { taken: true as const }));
      },
      aliasTaken: () => new ConflictError('reconciliation never uses an alias'),
      exhausted: () => new ConflictError('No free code; raise CODE_LENGTH.'),
    });
    for (const row of created) keys.push(keyOf(site, row.postId!));
    const codes = [...updatedCodes, ...created.filter((r) => r.status === 'active').map((r) => r.code)];
    await enqueueLinkSyncs(tx, codes, reason);
    return { codes, keys };
  });
  await propagate(deps, result.codes, reason);
  return result.keys;
}

/**
 * Serving store and caches in one batch at once; Bitly (and the rest) through the sync queue, where the
 * transaction queued the codes: one kick wakes its drainer.
 */
export async function propagate(
  deps: WordPressReconcileDeps,
  codes: string[],
  reason: string,
): Promise<void> {
  if (codes.length === 0) return;
  await refreshLinks(deps.resolver, codes);
  await deps.queue.kickSyncQueue(reason);
}
