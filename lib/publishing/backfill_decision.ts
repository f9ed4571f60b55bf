// What each post of a backfill batch gets (keep, adopt, bind an import, mint), and the dry run's answers from it.

import { describeScanResult, type ScanResult } from '../safety/scan_result.ts';
import {
  listLinksByPostIds,
  listNewestUnpublishes,
  listUnboundImportsByTarget,
} from '../stores/backfill_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { getLinksByCodes } from '../stores/link_store.ts';
import type { Db } from '../stores/sql.ts';
import { newTargetProblem } from '../targets/new_target_problem.ts';
import { toAdoptableCode } from './backfill_adoption.ts';
import type { BackfillBatch, BackfillOutcome, BackfillPost, BackfillResult } from './backfill_batch.ts';
import type { BackfillDeps } from './backfill_deps.ts';

/** A scheduled post's date may be this far ahead of our clock and still count as published (clock skew). */
const FUTURE_SLACK_MS = 5 * 60_000;

export type Decision =
  | { kind: 'done'; result: BackfillResult }
  | { kind: 'bind'; post: BackfillPost; link: LinkRow }
  | { kind: 'adopt'; post: BackfillPost; code: string }
  | { kind: 'mint'; post: BackfillPost };

/**
 * What each post of the batch gets, read-only (the dry run answers this; the real run re-decides under the
 * posts' locks). `scans` holds the safety verdict of every permalink that may need a new link.
 */
export async function decide(
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
export async function scanNew(deps: BackfillDeps, decisions: Decision[]): Promise<Map<number, ScanResult>> {
  const fresh = decisions.filter(
    (d): d is Extract<Decision, { kind: 'adopt' | 'mint' }> => d.kind === 'adopt' || d.kind === 'mint',
  );
  if (fresh.length === 0) return new Map();
  const results = await deps.safety.scanMany(fresh.map((d) => d.post.permalink));
  return new Map(fresh.map((d, i) => [d.post.postId, results[i]!]));
}
