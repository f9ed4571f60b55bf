// One page of a site's listing against its links: identities settled first, then drift marked and repaired.
import { fileReview, settlePostIdentity, toPermalinkPath } from '../publishing/post_identity.ts';
import { listLinksByPostIds } from '../stores/backfill_store.ts';
import { lockKeys } from '../stores/link_batch_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { type Drift, insertMarks, updateMarksRepaired } from '../stores/reconcile_store.ts';
import type { ListedPost } from './wordpress_listing.ts';
import { keyOf, type PassInput, type WordPressReconcileDeps } from './wordpress_pass.ts';
import { type Planned, repair } from './wordpress_repair.ts';

/**
 * A post's identity first (ADR 0057): a post whose claim names another code than its binding, or, in migration
 * mode, one whose binding does not point at its permalink's path, is settled by claim, GUID, path, then ID.
 * Returns the posts filed for review (left as they are).
 */
async function settlePageIdentities(
  deps: WordPressReconcileDeps,
  input: PassInput,
  posts: ListedPost[],
  links: Map<number, LinkRow>,
): Promise<Set<number>> {
  const { site } = input;
  const needs = posts.filter((p) => {
    const link = links.get(p.postId);
    if (p.knownCode && link?.code !== p.knownCode) return true;
    if (!input.migrating) return false;
    return !link || toPermalinkPath(link.targetUrl) !== toPermalinkPath(p.permalink);
  });
  const conflicted = new Set<number>();
  if (needs.length === 0) return conflicted;
  const actor = `wordpress:${site}`;
  const reason = `wordpress reconciliation ${input.runId}`;
  for (const post of needs) {
    // One transaction per post: a re-bind locks the code's former post too, and must not wait on a whole page.
    await deps.sql.begin(async (tx) => {
      await lockKeys(tx, [`post|${site}|${post.postId}`]);
      const outcome = await settlePostIdentity(
        tx,
        { site, postId: post.postId, knownCode: post.knownCode, guid: post.guid, permalink: post.permalink },
        { migrating: input.migrating, actor, reason },
      );
      if (outcome.kind === 'conflict') {
        await fileReview(tx, outcome.review);
        conflicted.add(post.postId);
        input.tally.reviewed++;
      } else if (outcome.kind === 'rebound') input.tally.rebound++;
    });
  }
  return conflicted;
}

/** Compares one page of posts with their links; repairs when asked. */
export async function reconcilePage(
  deps: WordPressReconcileDeps,
  input: PassInput,
  posts: ListedPost[],
  fetchedAt: Date,
): Promise<void> {
  const { site } = input;
  const postIds = posts.map((p) => p.postId);
  let links = await listLinksByPostIds(deps.sql, site, postIds);
  let conflicted = new Set<number>();
  if (input.repair) {
    conflicted = await settlePageIdentities(deps, input, posts, links);
    links = await listLinksByPostIds(deps.sql, site, postIds);
  }
  const marks: { code: string; drift: Drift | null }[] = [];
  const planned: Planned[] = [];
  const missing: ListedPost[] = [];
  for (const post of posts) {
    const key = keyOf(site, post.postId);
    // Filed for review: its link (if any) is left as it is, and it is not absent either.
    if (conflicted.has(post.postId)) {
      marks.push({ code: key, drift: 'collision' });
      continue;
    }
    const link = links.get(post.postId);
    const published = post.status === 'publish';
    if (!link) {
      marks.push({ code: key, drift: published ? 'missing' : null });
      if (published) missing.push(post);
      continue;
    }
    // A deleted link never comes back; a pending one belongs to its publish workflow.
    if (link.deletedAt || link.status === 'pending') {
      marks.push({ code: key, drift: published || link.deletedAt ? null : 'gone' });
      if (!published && !link.deletedAt) planned.push({ link, post, change: 'gone' });
      continue;
    }
    if (published) {
      // A published article's link answers the article: an expiry that passed (fired or not yet) is drift like
      // a gone link, whoever set it; its fallback would otherwise send the article's readers elsewhere for good.
      const pastExpiry = link.expiresAt !== null && link.expiresAt.getTime() <= fetchedAt.getTime();
      const expired = link.status === 'expired' || (link.status === 'active' && pastExpiry);
      const restore = link.status === 'gone' || expired;
      const retarget = link.targetUrl !== post.permalink && (link.status === 'active' || restore);
      marks.push({ code: key, drift: restore || retarget ? 'stale' : null });
      if (restore || retarget)
        planned.push({
          link,
          post,
          change: restore && retarget ? 'retarget+restore' : restore ? 'restore' : 'retarget',
          ...(restore && (expired || pastExpiry) ? { clearExpiry: true } : {}),
        });
    } else {
      // Trashed, unpublished, scheduled again, private: not public, so its link answers 410 (code kept).
      const live = link.status === 'active';
      marks.push({ code: key, drift: live ? 'gone' : null });
      if (live) planned.push({ link, post, change: 'gone' });
    }
  }
  await insertMarks(deps.sql, input.runId, 'wordpress', marks);
  if (!input.repair || (planned.length === 0 && missing.length === 0)) return;
  const repaired = await repair(deps, input, planned, missing, fetchedAt);
  await updateMarksRepaired(deps.sql, input.runId, 'wordpress', repaired);
}
