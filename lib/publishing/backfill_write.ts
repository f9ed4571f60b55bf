// A backfill batch in one transaction: identities settled, imports bound, back-halves adopted, the rest minted.

import { queueArchiveCopies } from '../archive/archive_queue.ts';
import { mintCodes } from '../links/mint.ts';
import { newPostLink } from '../links/new_post_link.ts';
import { ConflictError } from '../shared/errors.ts';
import { linkKey } from '../shared/link_key.ts';
import {
  type BackfilledLink,
  bindLinkToPost,
  insertAdoptedVendorLinks,
  insertAuditEntries,
  insertBackfilledLinks,
  insertBackfillPosts,
  listBackfillPosts,
  upsertBackfillRun,
} from '../stores/backfill_store.ts';
import { lockKeys } from '../stores/link_batch_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import { recordInstallation, upsertPostGuids } from '../stores/post_identity_store.ts';
import type { Tx } from '../stores/sql.ts';
import { insertInhouseOnly } from '../stores/vendor_link_store.ts';
import { getSiteDomain } from '../stores/wordpress_site_domain_store.ts';
import { upsertWordPressSite } from '../stores/wordpress_site_store.ts';
import { toAdoptableCode } from './backfill_adoption.ts';
import type { BackfillBatch, BackfillOutcome, BackfillPost, BackfillResult } from './backfill_batch.ts';
import { type Decision, decide, scanNew } from './backfill_decision.ts';
import type { BackfillDeps } from './backfill_deps.ts';
import { fileReview, isMigrating, settlePostIdentity } from './post_identity.ts';

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

/** Decides and writes a batch's answers (a post answered before keeps its first answer). */
export async function writeBatch(
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
    // Minted in the short domain the site is mapped to (ADR 0078), like a publish.
    const domain = toMint.length > 0 ? await getSiteDomain(tx, site) : '';
    const minted = await mintCodes(toMint, {
      codeLength: deps.codeLength,
      claim: async (round) => {
        const rows = await insertBackfilledLinks(
          tx,
          site,
          round.map((r) => toNew(r.claimant, linkKey(domain, r.code))),
          { actor, reason },
        );
        const byCode = new Set(rows.map((r) => r.code));
        for (const row of rows) settle(row, 'minted');
        return round.map((r) =>
          byCode.has(linkKey(domain, r.code))
            ? { claimed: linkKey(domain, r.code) }
            : { taken: true as const },
        );
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
    const mintedCodes = queued.filter((a) => a.outcome === 'minted').map((a) => a.code!);
    // Archive links nobody has yet go after every change (ADR 0104): the adopted back-halves below, which readers
    // already follow to the old CMS's address, are re-pointed first.
    await enqueueLinkSyncs(tx, mintedCodes, `link.created by backfill ${run}`, 'archive');
    await queueArchiveCopies(tx, deps, mintedCodes, `link.created by backfill ${run}`);
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
