// Archive backfill (integrations/wordpress/CONTRACT.md §1): every post WordPress published before
// the plugin arrived gets its one code. A batch is decided and written in one transaction before the 202, per
// post: a post that has a link keeps it; one whose earlier short link (`knownShortUrl` on our Bitly or short
// domain, or a link reconciliation imported from Bitly pointing at its permalink) is free adopts that
// back-half; anything else is minted. The new links are queued for the sync-queue drainer in the same
// transaction (ADR 0024), which takes them to the serving store and to Bitly in batches; the run's workflow wakes
// it. Re-sent batches get the answers recorded the first time.

import { type BackfillReport, getBackfillWorkflowId } from '../../workflows/contract.ts';
import { isPossibleCode } from '../codes/code_rules.ts';
import { mintCodes } from '../links/mint.ts';
import { newPostLink } from '../links/new_post_link.ts';
import { kickSyncQueueIfWaiting } from '../propagation/link_sync_queue.ts';
import { refreshLinks } from '../propagation/refresh_links.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import type { SafetyScanner } from '../safety/safety_scanner.ts';
import { describeScanResult, type ScanResult } from '../safety/scan_result.ts';
import { ConflictError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { TaskContext } from '../shared/task_context.ts';
import {
  type BackfilledLink,
  bindLinkToPost,
  countBackfillPosts,
  finishBackfillRun,
  getBackfillRun,
  insertAdoptedVendorLinks,
  insertAuditEntries,
  insertBackfilledLinks,
  insertBackfillPosts,
  listBackfillPosts,
  listLinksByPostIds,
  listNewestUnpublishes,
  listUnboundImportsByTarget,
  listUnpropagatedPosts,
  updatePostsPropagated,
  upsertBackfillRun,
} from '../stores/backfill_store.ts';
import { lockKeys } from '../stores/link_batch_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { getLinksByCodes } from '../stores/link_store.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import { recordInstallation, upsertPostGuids } from '../stores/post_identity_store.ts';
import type { Db, Sql, Tx } from '../stores/sql.ts';
import { insertInhouseOnly } from '../stores/vendor_link_store.ts';
import { upsertWordPressSite } from '../stores/wordpress_site_store.ts';
import { newTargetProblem } from '../targets/new_target_problem.ts';
import type { CanonicalTargetPolicy as TargetPolicy } from '../targets/target_rule.ts';
import type { SyncQueueKicker } from '../temporal/link_sync.ts';
import type { WordPressReconcileRequester } from './accept_site_event.ts';
import type { BackfillBatch, BackfillOutcome, BackfillPost, BackfillResult } from './backfill_batch.ts';
import { type BitlyBudget, type BitlyBudgetDeps, describeBitlyBudget } from './bitly_budget.ts';
import { fileReview, isMigrating, settlePostIdentity } from './post_identity.ts';

export interface BackfillDeps {
  sql: Sql;
  logger: Logger;
  codeLength: number;
  safety: SafetyScanner;
  targetPolicy: TargetPolicy;
  /** Lower-case hosts whose back-halves a post may adopt: BITLY_DOMAIN and the short host. */
  adoptableHosts: readonly string[];
  /** The Bitly branded domain, when Bitly is configured: an adopted back-half there is found on Bitly as ours. */
  bitlyDomain?: string | undefined;
  /** Bitly's part (when Bitly is configured): the dry run's budget, and archive links kept in-house only. */
  bitlyBudget?: BitlyBudgetDeps | undefined;
  /** The web tier's resolver: a batch's new links go to the serving store before the 202 (best effort). */
  resolver?: LinkResolver | undefined;
  now?: () => Date;
}

/** Tells the run's workflow (`backfill:{site}:{run}`) a batch was written; throws when Temporal cannot take it. */
export interface BackfillSignaller {
  signalBackfill(input: { site: string; runId: string; batch: number; final: boolean }): Promise<{
    workflowId: string;
  }>;
  /** Starts the site's WordPress reconciliation (a new installation switched it into migration mode). */
  requestWordPressReconcile?(input: { site: string; reason: string }): Promise<unknown>;
}

/** A scheduled post's date may be this far ahead of our clock and still count as published (clock skew). */
const FUTURE_SLACK_MS = 5 * 60_000;

/** The hosts whose back-halves may be adopted, from configuration. */
export function getAdoptableHosts(config: { shortBaseUrl: string; bitly?: { domain: string } | undefined }) {
  const hosts = new Set([new URL(config.shortBaseUrl).host.toLowerCase()]);
  if (config.bitly) hosts.add(config.bitly.domain.toLowerCase());
  return [...hosts];
}

/** The back-half of a short URL on one of our domains that could be one of our codes, or null. */
export function toAdoptableCode(shortUrl: string, hosts: readonly string[]): string | null {
  let url: URL;
  try {
    url = new URL(shortUrl);
  } catch {
    return null;
  }
  if (!hosts.includes(url.host.toLowerCase()) || url.username || url.password) return null;
  const m = /^\/([^/]+)\/?$/.exec(url.pathname);
  if (!m || !isPossibleCode(m[1]!)) return null;
  return m[1]!;
}

/**
 * Settles the identity of each post that claims a code (or, in migration mode, every post): a code bound to
 * another post of the site moves to this one. Returns the posts refused (filed for review), answered `rejected`.
 */
async function settleBatchIdentities(
  tx: Tx,
  deps: BackfillDeps,
  site: string,
  posts: BackfillPost[],
  audit: { actor: string; reason: string },
): Promise<Map<number, BackfillResult>> {
  const refused = new Map<number, BackfillResult>();
  const migrating = await isMigrating(tx, site);
  for (const post of posts) {
    const knownCode =
      post.knownCode ??
      (post.knownShortUrl ? toAdoptableCode(post.knownShortUrl, deps.adoptableHosts) : null);
    if (!knownCode && !migrating) continue;
    const outcome = await settlePostIdentity(
      tx,
      {
        site,
        postId: post.postId,
        knownCode: knownCode ?? undefined,
        guid: post.guid,
        permalink: post.permalink,
      },
      { migrating, ...audit },
    );
    if (outcome.kind === 'conflict') {
      await fileReview(tx, outcome.review);
      refused.set(post.postId, {
        postId: post.postId,
        outcome: 'rejected',
        detail: `held for review: ${outcome.review.detail}`,
      });
    }
  }
  return refused;
}

type Decision =
  | { kind: 'done'; result: BackfillResult }
  | { kind: 'bind'; post: BackfillPost; link: LinkRow }
  | { kind: 'adopt'; post: BackfillPost; code: string }
  | { kind: 'mint'; post: BackfillPost };

/**
 * What each post of the batch gets, read-only (the dry run answers this; the real run re-decides under the
 * posts' locks). `scans` holds the safety verdict of every permalink that may need a new link.
 */
async function decide(
  db: Db,
  deps: BackfillDeps,
  batch: BackfillBatch,
): Promise<{ decisions: Decision[]; existing: Map<number, LinkRow> }> {
  const now = (deps.now?.() ?? new Date()).getTime();
  const postIds = batch.posts.map((p) => p.postId);
  const [existing, unpublished] = await Promise.all([
    listLinksByPostIds(db, batch.site, postIds),
    listNewestUnpublishes(db, batch.site, postIds),
  ]);
  const decisions: (Decision | undefined)[] = [];
  const open: { index: number; post: BackfillPost; code: string | null }[] = [];
  for (const post of batch.posts) {
    const link = existing.get(post.postId);
    if (link) {
      const shared = link.status !== 'pending';
      decisions.push({
        kind: 'done',
        result: link.deletedAt
          ? { postId: post.postId, outcome: 'deleted', code: link.code, detail: 'its link was deleted' }
          : { postId: post.postId, outcome: 'kept', ...(shared ? { code: link.code } : {}) },
      });
      continue;
    }
    const problem = newTargetProblem(post.permalink, deps.targetPolicy);
    if (problem) {
      decisions.push({
        kind: 'done',
        result: { postId: post.postId, outcome: 'rejected', detail: `permalink ${problem}` },
      });
      continue;
    }
    if (Date.parse(post.publishedAt) > now + FUTURE_SLACK_MS) {
      decisions.push({
        kind: 'done',
        result: {
          postId: post.postId,
          outcome: 'not-published',
          detail: `scheduled for ${post.publishedAt}`,
        },
      });
      continue;
    }
    const gone = unpublished.get(post.postId);
    if (gone && gone.getTime() > Date.parse(post.modifiedAt)) {
      decisions.push({
        kind: 'done',
        result: {
          postId: post.postId,
          outcome: 'not-published',
          detail: `unpublished at ${gone.toISOString()}`,
        },
      });
      continue;
    }
    const code = post.knownShortUrl ? toAdoptableCode(post.knownShortUrl, deps.adoptableHosts) : null;
    open.push({ index: decisions.length, post, code });
    decisions.push(undefined);
  }
  // Adoption: a free back-half from knownShortUrl; else a link imported from Bitly pointing at the permalink.
  const candidates = open.filter((o) => o.code !== null).map((o) => o.code!);
  const taken = await getLinksByCodes(db, candidates);
  const imports = await listUnboundImportsByTarget(
    db,
    open.map((o) => o.post.permalink),
  );
  const claimed = new Set<string>();
  for (const { index, post, code } of open) {
    const holder = code !== null ? taken.get(code) : undefined;
    if (
      code !== null &&
      holder &&
      holder.site === null &&
      holder.origin === 'import' &&
      !holder.deletedAt &&
      !claimed.has(code)
    ) {
      claimed.add(code);
      decisions[index] = { kind: 'bind', post, link: holder };
    } else if (code !== null && !holder && !claimed.has(code)) {
      claimed.add(code);
      decisions[index] = { kind: 'adopt', post, code };
    } else {
      const imported = imports.get(post.permalink);
      if (imported && !claimed.has(imported.code)) {
        claimed.add(imported.code);
        decisions[index] = { kind: 'bind', post, link: imported };
      } else decisions[index] = { kind: 'mint', post };
    }
  }
  return { decisions: decisions as Decision[], existing };
}

const WOULD: Record<string, BackfillOutcome> = {
  bind: 'would-adopt',
  adopt: 'would-adopt',
  mint: 'would-mint',
};

/**
 * A dry run: what each post would get, and how many Bitly creates a real run would make (a new link, or a
 * back-half adopted from our own short host; a back-half Bitly already holds is not created again); nothing is
 * written, locked or started.
 */
export async function planBackfillBatch(
  deps: BackfillDeps,
  batch: BackfillBatch,
): Promise<{ results: BackfillResult[]; bitlyCreates: number }> {
  const { decisions } = await decide(deps.sql, deps, batch);
  const scans = await scanNew(deps, decisions);
  const bitlyCreates = decisions.filter(
    (d) =>
      (d.kind === 'mint' ||
        (d.kind === 'adopt' && new URL(d.post.knownShortUrl!).host.toLowerCase() !== deps.bitlyDomain)) &&
      scans.get(d.post.postId)?.verdict !== 'blocked',
  ).length;
  const results = decisions.map((d): BackfillResult => {
    if (d.kind === 'done') {
      const r = d.result;
      return r.outcome === 'kept' ? { ...r, outcome: 'would-keep' } : r;
    }
    if (d.kind !== 'bind' && scans.get(d.post.postId)?.verdict === 'blocked')
      return {
        postId: d.post.postId,
        outcome: 'blocked',
        detail: describeScanResult(scans.get(d.post.postId)!) ?? 'blocked',
      };
    return {
      postId: d.post.postId,
      outcome: WOULD[d.kind]!,
      ...(d.kind === 'bind' ? { code: d.link.code } : d.kind === 'adopt' ? { code: d.code } : {}),
    };
  });
  return { results, bitlyCreates };
}

/** Scans the permalinks that would get a new link (one scanner call for the batch). */
async function scanNew(deps: BackfillDeps, decisions: Decision[]): Promise<Map<number, ScanResult>> {
  const fresh = decisions.filter(
    (d): d is Extract<Decision, { kind: 'adopt' | 'mint' }> => d.kind === 'adopt' || d.kind === 'mint',
  );
  if (fresh.length === 0) return new Map();
  const results = await deps.safety.scanMany(fresh.map((d) => d.post.permalink));
  return new Map(fresh.map((d, i) => [d.post.postId, results[i]!]));
}

export interface AcceptedBackfillBatch {
  workflowId: string;
  accepted: number;
  results: BackfillResult[];
  /** A dry run's Bitly budget, when Bitly is configured. */
  bitly?: BitlyBudget;
}

/**
 * Writes a batch durably and hands it to the run's workflow: the answers (and every new link, adoption and
 * audit entry) are committed in one transaction, then the workflow is signalled. A batch sent again gets the
 * recorded answers (and signals again). When Temporal cannot take the signal the caller answers 503: the plugin
 * resends the same batch, which is answered from the record and signalled then.
 */
export async function acceptBackfillBatch(
  deps: BackfillDeps & { workflows: BackfillSignaller },
  batch: BackfillBatch,
): Promise<AcceptedBackfillBatch> {
  const workflowId = getBackfillWorkflowId(batch.site, batch.run);
  if (batch.dryRun) {
    const plan = await planBackfillBatch(deps, batch);
    return {
      workflowId,
      accepted: batch.posts.length,
      results: plan.results,
      ...(deps.bitlyBudget
        ? { bitly: await describeBitlyBudget(deps.bitlyBudget, batch.run, plan.bitlyCreates) }
        : {}),
    };
  }
  const { results, switched } = await writeBatch(deps, batch, workflowId);
  if (switched) {
    await deps.workflows.requestWordPressReconcile?.({
      site: batch.site,
      reason: 'a new WordPress installation (migration mode)',
    });
  }
  if (deps.resolver) {
    // Served at once from every replica; the run's workflow refreshes them again (with retries) anyway.
    const fresh = results
      .filter((r) => (r.outcome === 'minted' || r.outcome === 'adopted') && r.code)
      .map((r) => r.code!);
    await refreshLinks(deps.resolver, fresh).catch((err) =>
      deps.logger.warn(
        { err, site: batch.site, run: batch.run },
        'serving-store refresh after a batch failed',
      ),
    );
  }
  await deps.workflows.signalBackfill({
    site: batch.site,
    runId: batch.run,
    batch: batch.batch,
    final: batch.final,
  });
  return { workflowId, accepted: batch.posts.length, results };
}

async function writeBatch(
  deps: BackfillDeps,
  batch: BackfillBatch,
  workflowId: string,
): Promise<{ results: BackfillResult[]; switched: boolean }> {
  const { site, run } = batch;
  const actor = `wordpress:${site}`;
  const reason = `backfill ${run} batch ${batch.batch}`;
  // Outside the transaction: a Safe Browsing call must not hold the posts' locks. Scanned for every post that
  // has no answer yet; what the transaction then decides picks the results it needs.
  const known = await listBackfillPosts(
    deps.sql,
    site,
    run,
    batch.posts.map((p) => p.postId),
  );
  const unanswered = { ...batch, posts: batch.posts.filter((p) => !known.has(p.postId)) };
  const preview = await decide(deps.sql, deps, unanswered);
  const scans = await scanNew(deps, preview.decisions);
  const checkedAt = deps.now?.() ?? new Date();

  return deps.sql.begin(async (tx) => {
    await upsertBackfillRun(tx, {
      site,
      runId: run,
      workflowId,
      total: batch.total,
      restUrl: batch.restUrl,
      batch: batch.batch,
      final: batch.final,
    });
    await upsertWordPressSite(tx, site, batch.restUrl, checkedAt);
    const switched = batch.installationId
      ? (await recordInstallation(tx, site, batch.installationId)).switched
      : false;
    const recorded = await listBackfillPosts(
      tx,
      site,
      run,
      batch.posts.map((p) => p.postId),
    );
    const unrecorded = batch.posts.filter((p) => !recorded.has(p.postId));
    await lockKeys(
      tx,
      unrecorded.map((p) => `post|${site}|${p.postId}`),
    );
    // A post's claim to its code outranks its post ID (ADR 0057): re-bound before anything is decided.
    const inReview = await settleBatchIdentities(tx, deps, site, unrecorded, { actor, reason });
    const posts = unrecorded.filter((p) => !inReview.has(p.postId));
    const { decisions } = await decide(tx, deps, { ...batch, posts });
    const answers = new Map<number, BackfillResult & { propagate: boolean }>();
    for (const r of inReview.values()) answers.set(r.postId, { ...r, propagate: false });
    for (const d of decisions)
      if (d.kind === 'done') answers.set(d.result.postId, { ...d.result, propagate: false });

    const toNew = (post: BackfillPost, code: string): BackfilledLink =>
      newPostLink(post, code, scans.get(post.postId), checkedAt);
    const settle = (row: LinkRow, outcome: 'minted' | 'adopted') => {
      const blocked = row.status === 'pending';
      answers.set(row.postId!, {
        postId: row.postId!,
        outcome: blocked ? 'blocked' : outcome,
        code: row.code,
        ...(blocked ? { detail: row.safetyReason ?? 'blocked by the safety rules' } : {}),
        propagate: !blocked,
      });
    };
    const toMint: BackfillPost[] = [];
    const adoptedAudit: Parameters<typeof insertAuditEntries>[1] = [];

    // 1. Links imported from Bitly become the post's link (retargeted to the permalink if need be).
    for (const d of decisions) {
      if (d.kind !== 'bind') continue;
      const bound = await bindLinkToPost(tx, {
        code: d.link.code,
        site,
        postId: d.post.postId,
        targetUrl: d.post.permalink,
        title: d.post.title ?? null,
        sourceVersion: new Date(d.post.modifiedAt),
      });
      if (!bound) {
        toMint.push(d.post);
        continue;
      }
      settle(bound, 'adopted');
      adoptedAudit.push({
        code: bound.code,
        actor,
        action: 'link.adopted',
        before: { url: d.link.targetUrl, site: null, postId: null },
        after: { url: bound.targetUrl, site, postId: d.post.postId },
        reason: `${reason}: imported from Bitly, now the post's link`,
      });
    }
    // 2. Free back-halves of known short URLs.
    const adopt = decisions.filter((d): d is Extract<Decision, { kind: 'adopt' }> => d.kind === 'adopt');
    const inserted = await insertBackfilledLinks(
      tx,
      site,
      adopt.map((d) => toNew(d.post, d.code)),
      { actor, reason },
    );
    const insertedByPost = new Map(inserted.map((r) => [r.postId!, r]));
    for (const d of adopt) {
      const row = insertedByPost.get(d.post.postId);
      if (!row) {
        toMint.push(d.post);
        continue;
      }
      settle(row, 'adopted');
      adoptedAudit.push({
        code: row.code,
        actor,
        action: 'link.adopted',
        after: { code: row.code, knownShortUrl: d.post.knownShortUrl },
        reason: `${reason}: the back-half the post already had`,
      });
    }
    if (deps.bitlyDomain) {
      const onBitly = adopt.filter(
        (d) =>
          insertedByPost.has(d.post.postId) &&
          new URL(d.post.knownShortUrl!).host.toLowerCase() === deps.bitlyDomain,
      );
      // The bitlink holding that back-half is ours: the sync finds it by its keyword instead of creating one.
      await insertAdoptedVendorLinks(
        tx,
        onBitly.map((d) => ({ code: d.code, vendorId: `${deps.bitlyDomain}/${d.code}` })),
      );
    }
    await insertAuditEntries(tx, adoptedAudit);
    // 3. Everything else: fresh codes (the one minting loop; the UNIQUE key decides).
    toMint.push(
      ...decisions
        .filter((d): d is Extract<Decision, { kind: 'mint' }> => d.kind === 'mint')
        .map((d) => d.post),
    );
    const minted = await mintCodes(toMint, {
      codeLength: deps.codeLength,
      claim: async (round) => {
        const rows = await insertBackfilledLinks(
          tx,
          site,
          round.map((r) => toNew(r.claimant, r.code)),
          { actor, reason },
        );
        const byCode = new Set(rows.map((r) => r.code));
        for (const row of rows) settle(row, 'minted');
        return round.map((r) => (byCode.has(r.code) ? { claimed: r.code } : { taken: true as const }));
      },
      aliasTaken: () => new ConflictError('a backfill never uses an alias'),
      exhausted: () => new ConflictError('No free code after 8 attempts; raise CODE_LENGTH.'),
    });
    const refused = minted.find((m) => 'refused' in m);
    if (refused && 'refused' in refused) throw refused.refused;

    // The new links' replicas (serving store, Bitly) follow through the sync queue (ADR 0024): queued here, with
    // the links and the answers, so the run's workflow only wakes the drainer and nothing is left unpropagated.
    const queued = [...answers.values()].filter((a) => a.propagate && a.code);
    // Archive links kept off Bitly: marked before the sync queue sees them (a bitlink we adopted keeps its row).
    if (deps.bitlyBudget?.archiveLinksInHouse)
      await insertInhouseOnly(
        tx,
        queued.map((a) => a.code!),
      );
    await enqueueLinkSyncs(
      tx,
      queued.filter((a) => a.outcome === 'minted').map((a) => a.code!),
      `link.created by backfill ${run}`,
    );
    await enqueueLinkSyncs(
      tx,
      queued.filter((a) => a.outcome !== 'minted').map((a) => a.code!),
      `${reason}: adopted`,
    );
    // Each post's GUID, beside its code: a move to a new WordPress can then match an unclaimed post by it.
    const guidOf = new Map(batch.posts.flatMap((p) => (p.guid ? [[p.postId, p.guid] as const] : [])));
    await upsertPostGuids(
      tx,
      site,
      [...answers.values()].flatMap((a) => {
        const guid = guidOf.get(a.postId);
        return a.code && guid ? [{ code: a.code, guid }] : [];
      }),
    );
    const rows = [...answers.values()].map((a) => ({
      postId: a.postId,
      batch: batch.batch,
      outcome: a.outcome,
      code: a.code ?? null,
      detail: a.detail ?? null,
      propagated: true,
    }));
    await insertBackfillPosts(tx, site, run, rows);
    const results = batch.posts.map((p) => {
      const first = recorded.get(p.postId);
      if (first) return toResult(first);
      const a = answers.get(p.postId)!;
      return toResult({
        postId: a.postId,
        outcome: a.outcome,
        code: a.code ?? null,
        detail: a.detail ?? null,
      });
    });
    return { results, switched };
  });
}

function toResult(row: {
  postId: number;
  outcome: string;
  code: string | null;
  detail: string | null;
}): BackfillResult {
  return {
    postId: row.postId,
    outcome: row.outcome as BackfillOutcome,
    ...(row.code ? { code: row.code } : {}),
    ...(row.detail ? { detail: row.detail } : {}),
  };
}

/** Where a run's propagation stands. */
export interface BackfillProgress {
  propagated: number;
  remaining: number;
  finalReceived: boolean;
  finished: boolean;
}

/** Posts per step of the propagation of rows written before the sync queue (one transaction each). */
const PROPAGATE_CHUNK = 500;

/**
 * Wakes the sync-queue drainer for a run's new links: the batches queued them with the links (ADR 0024), so
 * this is one signalWithStart per step, whatever the batch size; the drainer takes them to the serving store,
 * the caches and Bitly (through its rate limit) in batches. Rows a batch recorded as unpropagated (written
 * before the queue existed) are queued here first, a chunk per transaction. Idempotent and resumable.
 */
export async function propagateBackfilledLinks(
  deps: { sql: Sql; logger: Logger; queue: SyncQueueKicker },
  input: { site: string; runId: string },
  context: TaskContext,
): Promise<BackfillProgress> {
  let propagated = 0;
  for (;;) {
    const rows = await listUnpropagatedPosts(deps.sql, input.site, input.runId, PROPAGATE_CHUNK);
    if (rows.length === 0) break;
    await deps.sql.begin(async (tx) => {
      await enqueueLinkSyncs(
        tx,
        rows.map((r) => r.code),
        `backfill ${input.runId}`,
      );
      await updatePostsPropagated(
        tx,
        input.site,
        input.runId,
        rows.map((r) => r.postId),
      );
    });
    propagated += rows.length;
    context.heartbeat({ propagated });
  }
  await kickSyncQueueIfWaiting(deps, `backfill ${input.runId}`);
  const run = await getBackfillRun(deps.sql, input.site, input.runId);
  const counts = await countBackfillPosts(deps.sql, input.site, input.runId);
  return {
    propagated,
    remaining: counts.unpropagated,
    finalReceived: run?.finalReceived ?? false,
    finished: run?.status === 'finished',
  };
}

/**
 * Closes a run whose final batch arrived and whose links all propagated, and asks for the site's WordPress
 * reconciliation (WordPress winning heals the links the run kept, and unpublishes whatever WordPress does not
 * list as published). Idempotent.
 */
export async function closeBackfillRun(
  deps: { sql: Sql; logger: Logger; wordpress?: WordPressReconcileRequester | undefined },
  input: { site: string; runId: string },
): Promise<BackfillReport> {
  await finishBackfillRun(deps.sql, input.site, input.runId);
  const run = await getBackfillRun(deps.sql, input.site, input.runId);
  const counts = await countBackfillPosts(deps.sql, input.site, input.runId);
  const report: BackfillReport = {
    site: input.site,
    runId: input.runId,
    outcomes: counts.outcomes,
    received: counts.received,
    propagated: counts.received - counts.unpropagated,
    durationMs: run ? (run.finishedAt ?? new Date()).getTime() - run.startedAt.getTime() : 0,
  };
  deps.logger.info(report, 'backfill run finished');
  if (deps.wordpress) {
    try {
      await deps.wordpress.requestWordPressReconcile({
        site: input.site,
        reason: `after backfill ${input.runId}`,
      });
    } catch (error) {
      deps.logger.warn(
        { err: error, ...input },
        'could not start the WordPress reconciliation after a backfill',
      );
    }
  }
  return report;
}
