// The WordPress reconciliation of one post: the destination checks found the article behind a WordPress-bound
// link dead or moved, and WordPress, not the check, decides what the link does (docs/OPERATIONS.md, "Dead
// destinations and archived copies"). The site's signed listing is asked for that post alone (`post_id`,
// integrations/wordpress/CONTRACT.md §5) and the post goes through the same page reconciliation as a full pass:
// published at a new permalink, the link is retargeted; trashed or unpublished, it is gone; published where it
// was, nothing changes (the check saw a passing failure, or a wall for bots). Absent from an answer filtered to
// it, the post was deleted for good: the link is gone, as a complete pass would make it. A plugin that predates
// `post_id` answers the listing's first page instead; absence proves nothing then, and the caller falls back to
// the whole site's reconciliation.
import { findRunHold } from '../publishing/mass_change_breaker.ts';
import { isMigrating } from '../publishing/post_identity.ts';
import { type TaskContext, throwIfCancelled } from '../shared/task_context.ts';
import { getLinkByPost } from '../stores/link_store.ts';
import { reconcileAbsentPosts } from './wordpress_absent.ts';
import { fetchListingPage } from './wordpress_listing.ts';
import { reconcilePage } from './wordpress_page.ts';
import type { Tally, WordPressReconcileDeps, WordPressSiteInput } from './wordpress_pass.ts';
import { getRestUrl } from './wordpress_sites.ts';

export interface WordPressPostResult {
  site: string;
  postId: number;
  /**
   * What WordPress says of the post: its listing status (`publish`, `trash`…), `absent` (deleted for good), or
   * `unknown` (no listing could say: no restUrl, or a plugin without `post_id`; see `error` and `wholeSite`).
   */
  wordpress: string;
  /** The link's status after the pass (null: the post has no link). */
  linkStatus: string | null;
  /** The plugin cannot list one post: the site's whole reconciliation is the way to ask. */
  wholeSite?: boolean;
  error?: string;
  /** The breaker held the change for an admin (ADR 0057). */
  held?: { holdId: number };
}

/** Reconciles one post of a site against its listing, WordPress winning, as a full pass would. */
export async function reconcileWordPressPost(
  deps: WordPressReconcileDeps,
  input: WordPressSiteInput & { postId: number },
  context: TaskContext,
): Promise<WordPressPostResult> {
  const { site, postId } = input;
  const linkStatus = async () => (await getLinkByPost(deps.sql, site, postId))?.status ?? null;
  const restUrl = await getRestUrl(deps, site);
  if (!restUrl) {
    return {
      site,
      postId,
      wordpress: 'unknown',
      linkStatus: await linkStatus(),
      error: 'no readable listing for this site (no restUrl known, or not in WORDPRESS_REST_URLS)',
    };
  }
  throwIfCancelled(context);
  const fetchedAt = new Date();
  const body = await fetchListingPage(deps.wordpress, { site, restUrl, page: 1, postId });
  const tally: Tally = { rebound: 0, reviewed: 0 };
  const pass = { ...input, migrating: await isMigrating(deps.sql, site), tally };
  const post = body.posts.find((p) => p.postId === postId);
  let wordpress: string;
  if (post) {
    await reconcilePage(deps, pass, [post], fetchedAt);
    wordpress = post.status;
  } else if (body.posts.some((p) => p.postId !== postId)) {
    // Other posts in the answer: the plugin ignored `post_id`, and this page says nothing of ours.
    return { site, postId, wordpress: 'unknown', linkStatus: await linkStatus(), wholeSite: true };
  } else {
    wordpress = 'absent';
    const link = await getLinkByPost(deps.sql, site, postId);
    const live =
      link &&
      !link.deletedAt &&
      (link.status === 'active' || link.status === 'pending') &&
      link.createdAt.getTime() < input.startedAtMs;
    if (link && live) await reconcileAbsentPosts(deps, pass, { only: [link] });
  }
  const hold = input.repair ? await findRunHold(deps.sql, site, input.runId) : null;
  return {
    site,
    postId,
    wordpress,
    linkStatus: await linkStatus(),
    ...(hold ? { held: { holdId: hold.id } } : {}),
  };
}
