// The WordPress leg of reconciliation: WordPress knows each article's canonical URL and status, so for a
// post's link it wins. Pages through the site's signed listing (wordpress_listing.ts) and compares each post with
// its link: a published post without one (a missed webhook) gets one; a moved permalink retargets it (the same
// code); a post trashed or unpublished makes it gone, one published again restores it (the same code), as does
// an expiry that passed on a published post's link (expiry and fallback dropped: where an article's link sends
// readers is WordPress's); a post absent from a complete listing (deleted for good) makes it gone. Marks land in reconcile_marks, side
// `wordpress`, keyed `{site}:{postId}`. Repairs change Postgres in one transaction per page, refresh the
// serving store and caches in one batch, and queue the changed links in the same transaction for the sync-queue
// drainer (ADR 0024), which takes them to Bitly in batches.
import { findRunHold } from '../publishing/mass_change_breaker.ts';
import { isMigrating } from '../publishing/post_identity.ts';
import type { TaskContext } from '../shared/task_context.ts';
import { throwIfCancelled } from '../shared/task_context.ts';
import {
  endMigrationIfSettled,
  recordInstallation,
  updateMigrationReconciled,
} from '../stores/post_identity_store.ts';
import { closeSettledReviews } from '../stores/wordpress_review_store.ts';
import { getWordPressSite } from '../stores/wordpress_site_store.ts';
import { reconcileAbsentPosts, reviewDetachedLinks } from './wordpress_absent.ts';
import { fetchListingPage } from './wordpress_listing.ts';
import { reconcilePage } from './wordpress_page.ts';
import type { Tally, WordPressReconcileDeps, WordPressSiteInput } from './wordpress_pass.ts';
import { getRestUrl, isListClosed, listWordPressSites } from './wordpress_sites.ts';

export interface WordPressSiteResult {
  site: string;
  /** Posts read from the listing (every sweep). */
  read: number;
  /** Every page was read with the same total (a post deleted mid-sweep restarts it, at most 3 sweeps). */
  complete: boolean;
  /** Why the site could not be reconciled (no restUrl, listing refused…); nothing was changed then. */
  error?: string;
  /** Codes moved to another post ID by a post's claim, GUID or path (ADR 0057). */
  rebound?: number;
  /** Posts and links filed for an admin's review in this pass. */
  reviewed?: number;
  /** The site was in migration mode for this pass; `ended`: it left it at the end. */
  migration?: 'ongoing' | 'ended';
  /** The breaker tripped: what went beyond the budget waits in this hold for an admin's decision. */
  held?: { holdId: number };
}

/** Sweeps of a listing whose total moved meanwhile before the run gives up on "absent means deleted". */
const MAX_SWEEPS = 3;
/**
 * Reconciles one site against its listing. Heartbeats the page it is on, so a retry resumes there (marks are
 * idempotent, so a page read twice is counted once).
 */
export async function reconcileWordPressSite(
  deps: WordPressReconcileDeps,
  input: WordPressSiteInput,
  context: TaskContext,
): Promise<WordPressSiteResult> {
  const restUrl = await getRestUrl(deps, input.site);
  if (!restUrl) {
    if (isListClosed(deps)) {
      const stored = await getWordPressSite(deps.sql, input.site);
      deps.logger.warn(
        { site: input.site, restUrlIgnored: Boolean(stored) },
        'a site not in WORDPRESS_REST_URLS asked for reconciliation: its listing is not read',
      );
      return {
        site: input.site,
        read: 0,
        complete: false,
        error: 'this site is not in WORDPRESS_REST_URLS: the restUrl its signed events carry is not read',
      };
    }
    return {
      site: input.site,
      read: 0,
      complete: false,
      error: 'no restUrl known for this site (no signed event yet; set WORDPRESS_REST_URLS)',
    };
  }
  const resumed = context.resumed as
    | { page: number; total: number | null; sweep: number; read: number; tally?: Tally }
    | undefined;
  let page = resumed?.page ?? 1;
  let total = resumed?.total ?? null;
  let sweep = resumed?.sweep ?? 1;
  let read = resumed?.read ?? 0;
  const tally: Tally = resumed?.tally ?? { rebound: 0, reviewed: 0 };
  let complete = false;
  let migrating = await isMigrating(deps.sql, input.site);
  for (;;) {
    throwIfCancelled(context);
    const fetchedAt = new Date();
    const body = await fetchListingPage(deps.wordpress, { site: input.site, restUrl, page });
    if (body.installationId && page === 1) {
      // The listing is signed by the installation that answers: a fresh WordPress switches the mode here too.
      if ((await recordInstallation(deps.sql, input.site, body.installationId)).switched) migrating = true;
    }
    if (total === null) total = body.total;
    else if (body.total !== total) {
      // A post was deleted (or, rarely, added) mid-sweep: pages shifted; read again from the start.
      if (sweep >= MAX_SWEEPS) break;
      sweep++;
      page = 1;
      total = null;
      continue;
    }
    await reconcilePage(deps, { ...input, migrating, tally }, body.posts, fetchedAt);
    read += body.posts.length;
    context.heartbeat({ page: page + 1, total, sweep, read, tally });
    if (body.posts.length === 0 || page >= body.totalPages) {
      complete = true;
      break;
    }
    page++;
  }
  let migration: WordPressSiteResult['migration'];
  if (complete) {
    const last = { page: page + 1, total, sweep, read, tally };
    // A heartbeat between stretches of the site's links (a million links is no single silent statement), with the
    // last page's details, so a retry resumes past the listing.
    await reconcileAbsentPosts(deps, { ...input, migrating, tally }, { beat: () => context.heartbeat(last) });
    if (input.repair) await reviewDetachedLinks(deps, { ...input, tally });
    // An ID-only conflict filed earlier in the pass is moot once a later match moved its code to the article.
    if (input.repair) await closeSettledReviews(deps.sql, input.site);
    if (migrating && input.repair) {
      // Migration mode ends with a complete pass that leaves nothing to review, or when the last item is resolved.
      await updateMigrationReconciled(deps.sql, input.site);
      migration = (await endMigrationIfSettled(deps.sql, input.site)) ? 'ended' : 'ongoing';
    } else if (migrating) migration = 'ongoing';
  } else
    deps.logger.warn(
      { site: input.site, sweeps: sweep },
      'WordPress listing kept moving; deletions not judged',
    );
  const hold = input.repair ? await findRunHold(deps.sql, input.site, input.runId) : null;
  return {
    site: input.site,
    read,
    complete,
    rebound: tally.rebound,
    reviewed: tally.reviewed,
    ...(migration ? { migration } : {}),
    ...(hold ? { held: { holdId: hold.id } } : {}),
  };
}

/** Attempts of one site's sweep (transient failures) before a full reconciliation moves on without it. */
const SITE_ATTEMPTS = 3;

/**
 * The WordPress phase of a full reconciliation: one site per call, in name order (`position.cursor` is the
 * last site done), then `done`. A site whose listing cannot be read is logged and skipped (after a few tries
 * for transient trouble), so one broken site never holds the other legs' report hostage.
 */
export async function reconcileWordPressPosts(
  deps: WordPressReconcileDeps,
  input: { runId: string; startedAtMs: number; position: { cursor: string | null }; repair: boolean },
  context: TaskContext,
): Promise<{ position: { phase: 'wordpress' | 'done'; cursor: string | null }; read: number }> {
  const sites = await listWordPressSites(deps);
  const next = sites.find((s) => input.position.cursor === null || s > input.position.cursor);
  if (!next) return { position: { phase: 'done', cursor: null }, read: 0 };
  try {
    const result = await reconcileWordPressSite(
      deps,
      { runId: input.runId, site: next, repair: input.repair, startedAtMs: input.startedAtMs },
      context,
    );
    if (result.error) deps.logger.warn({ site: next, error: result.error }, 'WordPress site not reconciled');
    return { position: { phase: 'wordpress', cursor: next }, read: result.read };
  } catch (error) {
    const transient = !(error instanceof Error && error.name === 'PermanentFailure');
    if (transient && context.attempt < SITE_ATTEMPTS) throw error;
    deps.logger.error(
      { site: next, err: (error as Error).message },
      'WordPress site not reconciled; moving on',
    );
    return { position: { phase: 'wordpress', cursor: next }, read: 0 };
  }
}
