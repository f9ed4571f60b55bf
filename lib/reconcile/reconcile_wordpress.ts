// The WordPress leg of reconciliation: WordPress knows each article's canonical URL and status, so for a
// post's link it wins. Pages through the site's signed listing (wordpress_listing.ts) and compares each post with
// its link: a published post without one (a missed webhook) gets one; a moved permalink retargets it (the same
// code); a post trashed or unpublished makes it gone, one published again restores it (the same code), as does
// an expiry that passed on a published post's link (expiry and fallback dropped: where an article's link sends
// readers is WordPress's); a post absent from a complete listing (deleted for good) makes it gone. Marks land in reconcile_marks, side
// `wordpress`, keyed `{site}:{postId}`. Repairs change Postgres in one transaction per page, refresh the
// serving store and caches in one batch, and queue the changed links in the same transaction for the sync-queue
// drainer (ADR 0024), which takes them to Bitly in batches.

import { mintCodes } from '../links/mint.ts';
import { firstSafety, newPostLink } from '../links/new_post_link.ts';
import { refreshLinks } from '../propagation/refresh_links.ts';
import {
  type BreakerSettings,
  type BudgetState,
  findRunHold,
  holdChanges,
  readBudget,
  spendBudget,
} from '../publishing/mass_change_breaker.ts';
import { fileReview, isMigrating, settlePostIdentity, toPermalinkPath } from '../publishing/post_identity.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
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
import type { HeldChangeRow } from '../stores/breaker_store.ts';
import { lockKeys } from '../stores/link_batch_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import {
  endMigrationIfSettled,
  listDetachedLinks,
  recordInstallation,
  updateMigrationReconciled,
} from '../stores/post_identity_store.ts';
import { type Drift, insertMarks, updateMarksRepaired } from '../stores/reconcile_store.ts';
import type { Sql } from '../stores/sql.ts';
import {
  type LinkBatchChange,
  listLinksAbsentFromListing,
  updateLinksBatch,
} from '../stores/wordpress_reconcile_store.ts';
import { closeSettledReviews } from '../stores/wordpress_review_store.ts';
import { getWordPressSite, listWordPressSites } from '../stores/wordpress_site_store.ts';
import { newTargetProblem } from '../targets/new_target_problem.ts';
import type { CanonicalTargetPolicy as TargetPolicy } from '../targets/target_rule.ts';
import type { SyncQueueKicker } from '../temporal/link_sync.ts';
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
  /** The breaker on mass change (WORDPRESS_BREAKER_SHARE, WORDPRESS_BREAKER_MIN); absent: the defaults. */
  wordpressBreaker?: BreakerSettings | undefined;
}

export interface WordPressSiteInput {
  /** The reconciliation run (marks and audit reasons). */
  runId: string;
  site: string;
  /** false: report drift only. */
  repair: boolean;
  /** When the run started: links minted after it are left to their own publish. */
  startedAtMs: number;
  /** The reconciliation workflow (a tripped breaker's hold names whom to signal). */
  workflowId?: string;
}

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
const keyOf = (site: string, postId: number) => `${site}:${postId}`;

/** True when WORDPRESS_REST_URLS is set: then it is the whole list of listings read. */
const isListClosed = (deps: Pick<WordPressReconcileDeps, 'wordpress'>) =>
  Object.keys(deps.wordpress.restUrls).length > 0;

/**
 * The site's listing base. With WORDPRESS_REST_URLS set, only what it lists (a restUrl a signed event or batch
 * carried is never read then, for that site or any other); otherwise the newest signed event's restUrl, which
 * the outgoing-request rule still keeps off private addresses (docs/adr/0058-outgoing-requests-rule.md).
 */
export async function getRestUrl(deps: Pick<WordPressReconcileDeps, 'sql' | 'wordpress'>, site: string) {
  if (isListClosed(deps)) return deps.wordpress.restUrls[site] ?? null;
  return (await getWordPressSite(deps.sql, site))?.restUrl ?? null;
}

/** Every site reconciliation reads: WORDPRESS_REST_URLS's when set, else those events and backfills named. */
export async function listKnownSites(
  deps: Pick<WordPressReconcileDeps, 'sql' | 'wordpress'> & { logger?: Logger },
): Promise<string[]> {
  const sites = new Set(Object.keys(deps.wordpress.restUrls));
  const stored = await listWordPressSites(deps.sql);
  if (!isListClosed(deps)) for (const row of stored) sites.add(row.site);
  else {
    const ignored = stored.filter((row) => !sites.has(row.site)).map((row) => row.site);
    if (ignored.length > 0) {
      deps.logger?.warn(
        { ignored: ignored.length, sites: ignored.slice(0, 20) },
        'sites whose signed events named a restUrl are not in WORDPRESS_REST_URLS: not read',
      );
    }
  }
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
    await reconcileAbsentPosts(deps, { ...input, migrating, tally });
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

/** Counts a pass keeps across pages (and activity retries, in its heartbeat). */
interface Tally {
  rebound: number;
  reviewed: number;
}

type PassInput = WordPressSiteInput & { migrating: boolean; tally: Tally };

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

/**
 * After a complete pass: links whose post claimed another code and whose own post never claimed them back are
 * filed for review (never made gone by an ID).
 */
async function reviewDetachedLinks(
  deps: WordPressReconcileDeps,
  input: WordPressSiteInput & { tally: Tally },
): Promise<void> {
  for (const link of await listDetachedLinks(deps.sql, input.site)) {
    await fileReview(deps.sql, {
      site: input.site,
      kind: 'unmatched-link',
      code: link.code,
      detail: `${link.code} lost its post ID to another post's claim, and no post of the listing claims it (it still points at ${link.targetUrl})`,
    });
    input.tally.reviewed++;
  }
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

/** Applies a page's repairs; returns the keys repaired. */
async function repair(
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
async function propagate(deps: WordPressReconcileDeps, codes: string[], reason: string): Promise<void> {
  if (codes.length === 0) return;
  await refreshLinks(deps.resolver, codes);
  await deps.queue.kickSyncQueue(reason);
}

/** A change as a breaker hold keeps it. */
function toHeldChange(link: LinkRow, change: 'retarget' | 'gone', permalink: string | null): HeldChangeRow {
  return {
    code: link.code,
    change,
    postId: link.postId,
    beforeUrl: link.targetUrl,
    afterUrl: change === 'retarget' ? permalink : null,
    beforeStatus: link.status,
    expectedVersion: link.version,
  };
}

/**
 * The breaker (ADR 0057): when the run has tripped already, or these changes would pass what is left of the
 * site's hourly budget, they go to the run's hold instead (true); the workflow then waits for a decision.
 */
async function holdIfOverBudget(
  deps: WordPressReconcileDeps,
  input: WordPressSiteInput,
  changes: HeldChangeRow[],
): Promise<boolean> {
  if (changes.length === 0) return false;
  const tripped = await findRunHold(deps.sql, input.site, input.runId);
  const budget: BudgetState = await readBudget(deps.sql, input.site, deps.wordpressBreaker);
  if (!tripped && changes.length <= budget.remaining) return false;
  // One transaction: a hold is never seen without its changes.
  const hold = await deps.sql.begin((tx) =>
    holdChanges(
      tx,
      { site: input.site, source: 'reconcile', runId: input.runId, workflowId: input.workflowId ?? null },
      budget,
      changes,
    ),
  );
  if (!tripped) {
    deps.logger.warn(
      {
        site: input.site,
        runId: input.runId,
        holdId: hold.id,
        budget: budget.budget,
        remaining: budget.remaining,
      },
      'WordPress breaker tripped: changes wait for an admin',
    );
  }
  return true;
}

/**
 * After a complete listing: live links of posts WordPress no longer has (deleted for good) become gone. In
 * migration mode an absent post ID proves nothing (IDs were reassigned): such links are filed for review.
 */
async function reconcileAbsentPosts(deps: WordPressReconcileDeps, input: PassInput): Promise<void> {
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
  if (input.migrating) {
    for (const link of absent) {
      await fileReview(deps.sql, {
        site: input.site,
        kind: 'unmatched-link',
        postId: link.postId,
        code: link.code,
        detail: `no post of the new installation claims ${link.code} or has its post ID ${link.postId}; it still points at ${link.targetUrl}`,
      });
      input.tally.reviewed++;
    }
    return;
  }
  if (
    await holdIfOverBudget(
      deps,
      input,
      absent.map((l) => toHeldChange(l, 'gone', null)),
    )
  )
    return;
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
    await spendBudget(tx, input.site, rows.length);
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
