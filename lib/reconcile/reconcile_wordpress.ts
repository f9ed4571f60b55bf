// The WordPress leg of reconciliation: WordPress knows each article's canonical URL and status, so for a
// post's link it wins. Pages through the site's signed listing (wordpress_listing.ts) and compares each post with
// its link: a published post without one (a missed webhook) gets one; a moved permalink retargets it (the same
// code); a post trashed or unpublished makes it gone, one published again restores it (the same code), as does
// an expiry that passed on a published post's link (expiry and fallback dropped: where an article's link sends
// readers is WordPress's); a post absent from a complete listing (deleted for good) makes it gone. Marks land in reconcile_marks, side
// `wordpress`, keyed `{site}:{postId}`. Repairs change Postgres in one transaction per page, refresh the
// serving store and caches in one batch, and queue the changed links in the same transaction for the sync-queue
// drainer (ADR 0024), which takes them to Bitly in batches.
import type { SyncQueueKicker } from '../links/link_sync.ts';
import { mintCodes } from '../links/mint.ts';
import { firstSafety, newPostLink } from '../links/new_post_link.ts';
import { newTargetProblem } from '../links/new_target_problem.ts';
import type { TargetPolicy } from '../links/target_policy.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { refreshLinks } from '../redirect/refresh_links.ts';
import type { SafetyScanner } from '../safety/safety_scanner.ts';
import type { ScanResult } from '../safety/scan_result.ts';
import { ConflictError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { TaskContext } from '../shared/task_context.ts';
import { throwIfCancelled } from '../shared/task_context.ts';
import {
  type BackfilledLink,
  insertAuditEntries,
  insertBackfilledLinks,
  listLinksByPostIds,
} from '../stores/backfill_store.ts';
import { lockKeys } from '../stores/link_batch_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import { type Drift, insertMarks, updateMarksRepaired } from '../stores/reconcile_store.ts';
import type { Sql } from '../stores/sql.ts';
import {
  type LinkBatchChange,
  listLinksAbsentFromListing,
  updateLinksBatch,
} from '../stores/wordpress_reconcile_store.ts';
import { getWordPressSite, listWordPressSites } from '../stores/wordpress_site_store.ts';
import { fetchListingPage, type ListedPost, type WordPressListingDeps } from './wordpress_listing.ts';

export interface WordPressReconcileDeps {
  sql: Sql;
  logger: Logger;
  resolver: LinkResolver;
  safety: SafetyScanner;
  targetPolicy: TargetPolicy;
  codeLength: number;
  /** Wakes the sync-queue drainer once a page's repairs (queued in their transaction) committed. */
  queue: SyncQueueKicker;
  wordpress: WordPressListingDeps;
}

export interface WordPressSiteInput {
  /** The reconciliation run (marks and audit reasons). */
  runId: string;
  site: string;
  /** false: report drift only. */
  repair: boolean;
  /** When the run started: links minted after it are left to their own publish. */
  startedAtMs: number;
}

export interface WordPressSiteResult {
  site: string;
  /** Posts read from the listing (every sweep). */
  read: number;
  /** Every page was read with the same total (a post deleted mid-sweep restarts it, at most 3 sweeps). */
  complete: boolean;
  /** Why the site could not be reconciled (no restUrl, listing refused…); nothing was changed then. */
  error?: string;
}

/** Sweeps of a listing whose total moved meanwhile before the run gives up on "absent means deleted". */
const MAX_SWEEPS = 3;
const keyOf = (site: string, postId: number) => `${site}:${postId}`;

/** The site's listing base: WORDPRESS_REST_URLS first, else the newest signed event's restUrl. */
export async function getRestUrl(deps: Pick<WordPressReconcileDeps, 'sql' | 'wordpress'>, site: string) {
  return deps.wordpress.restUrls[site] ?? (await getWordPressSite(deps.sql, site))?.restUrl ?? null;
}

/** Every site reconciliation knows: from events and backfills, and WORDPRESS_REST_URLS. */
export async function listKnownSites(
  deps: Pick<WordPressReconcileDeps, 'sql' | 'wordpress'>,
): Promise<string[]> {
  const sites = new Set(Object.keys(deps.wordpress.restUrls));
  for (const row of await listWordPressSites(deps.sql)) sites.add(row.site);
  return [...sites].sort();
}

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
    return {
      site: input.site,
      read: 0,
      complete: false,
      error: 'no restUrl known for this site (no signed event yet; set WORDPRESS_REST_URLS)',
    };
  }
  const resumed = context.resumed as
    | { page: number; total: number | null; sweep: number; read: number }
    | undefined;
  let page = resumed?.page ?? 1;
  let total = resumed?.total ?? null;
  let sweep = resumed?.sweep ?? 1;
  let read = resumed?.read ?? 0;
  let complete = false;
  for (;;) {
    throwIfCancelled(context);
    const fetchedAt = new Date();
    const body = await fetchListingPage(deps.wordpress, { site: input.site, restUrl, page });
    if (total === null) total = body.total;
    else if (body.total !== total) {
      // A post was deleted (or, rarely, added) mid-sweep: pages shifted; read again from the start.
      if (sweep >= MAX_SWEEPS) break;
      sweep++;
      page = 1;
      total = null;
      continue;
    }
    await reconcilePage(deps, input, body.posts, fetchedAt);
    read += body.posts.length;
    context.heartbeat({ page: page + 1, total, sweep, read });
    if (body.posts.length === 0 || page >= body.totalPages) {
      complete = true;
      break;
    }
    page++;
  }
  if (complete) await reconcileAbsentPosts(deps, input);
  else
    deps.logger.warn(
      { site: input.site, sweeps: sweep },
      'WordPress listing kept moving; deletions not judged',
    );
  return { site: input.site, read, complete };
}

interface Planned {
  link: LinkRow;
  post: ListedPost;
  change: 'retarget' | 'restore' | 'retarget+restore' | 'gone';
  /** A restore that also drops a passed expiry (and its fallback), so no timer takes the article away again. */
  clearExpiry?: boolean;
}

/** Compares one page of posts with their links; repairs when asked. */
async function reconcilePage(
  deps: WordPressReconcileDeps,
  input: WordPressSiteInput,
  posts: ListedPost[],
  fetchedAt: Date,
): Promise<void> {
  const { site } = input;
  const links = await listLinksByPostIds(
    deps.sql,
    site,
    posts.map((p) => p.postId),
  );
  const marks: { code: string; drift: Drift | null }[] = [];
  const planned: Planned[] = [];
  const missing: ListedPost[] = [];
  for (const post of posts) {
    const key = keyOf(site, post.postId);
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

/** Applies a page's repairs; returns the keys repaired. */
async function repair(
  deps: WordPressReconcileDeps,
  input: WordPressSiteInput,
  planned: Planned[],
  missing: ListedPost[],
  fetchedAt: Date,
): Promise<string[]> {
  const { site } = input;
  const actor = `wordpress:${site}`;
  const reason = `wordpress reconciliation ${input.runId}`;
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
async function propagate(deps: WordPressReconcileDeps, codes: string[], reason: string): Promise<void> {
  if (codes.length === 0) return;
  await refreshLinks(deps.resolver, codes);
  await deps.queue.kickSyncQueue(reason);
}

/** After a complete listing: live links of posts WordPress no longer has (deleted for good) become gone. */
async function reconcileAbsentPosts(deps: WordPressReconcileDeps, input: WordPressSiteInput): Promise<void> {
  const absent = await listLinksAbsentFromListing(deps.sql, {
    runId: input.runId,
    site: input.site,
    startedAt: new Date(input.startedAtMs),
  });
  if (absent.length === 0) return;
  const keys = absent.map((l) => keyOf(input.site, l.postId!));
  await insertMarks(
    deps.sql,
    input.runId,
    'wordpress',
    keys.map((code) => ({ code, drift: 'gone' as const })),
  );
  if (!input.repair) return;
  const reason = `wordpress reconciliation ${input.runId}: post deleted in WordPress`;
  const changed = await deps.sql.begin(async (tx) => {
    await lockKeys(
      tx,
      absent.map((l) => `post|${input.site}|${l.postId}`),
    );
    const rows = await updateLinksBatch(
      tx,
      absent.map((l) => ({ code: l.code, status: 'gone', expectedVersion: l.version })),
    );
    await insertAuditEntries(
      tx,
      rows.map((r) => ({
        code: r.code,
        actor: `wordpress:${input.site}`,
        action: 'link.status_changed',
        before: { status: absent.find((a) => a.code === r.code)?.status },
        after: { status: 'gone' },
        reason,
      })),
    );
    await enqueueLinkSyncs(
      tx,
      rows.map((r) => r.code),
      reason,
    );
    return rows;
  });
  await propagate(
    deps,
    changed.map((r) => r.code),
    reason,
  );
  await updateMarksRepaired(
    deps.sql,
    input.runId,
    'wordpress',
    changed.map((r) => keyOf(input.site, r.postId!)),
  );
}

/** Attempts of one site's sweep (transient failures) before a full reconciliation moves on without it. */
const SITE_ATTEMPTS = 3;

/**
 * The WordPress phase of a full reconciliation: one site per call, in name order (`position.cursor` is the
 * last site done), then `done`. A site whose listing cannot be read is logged and skipped (after a few tries
 * for transient trouble), so one broken site never holds the other legs' report hostage.
 */
export async function reconcileWordPressStep(
  deps: WordPressReconcileDeps,
  input: { runId: string; startedAtMs: number; position: { cursor: string | null }; repair: boolean },
  context: TaskContext,
): Promise<{ position: { phase: 'wordpress' | 'done'; cursor: string | null }; read: number }> {
  const sites = await listKnownSites(deps);
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
