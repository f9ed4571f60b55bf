// After a complete listing: links of posts WordPress no longer has, and links no post claims any more.

import { spendBudget } from '../publishing/mass_change_breaker.ts';
import { fileReview } from '../publishing/post_identity.ts';
import { insertAuditEntries } from '../stores/backfill_store.ts';
import { lockKeys } from '../stores/link_batch_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import { listDetachedLinks } from '../stores/post_identity_store.ts';
import { analyzeMarks, insertMarks, updateMarksRepaired } from '../stores/reconcile_store.ts';
import {
  findPostIdStretchEnd,
  listLinksAbsentFromListing,
  updateLinksBatch,
} from '../stores/wordpress_reconcile_store.ts';
import { holdIfOverBudget, toHeldChange } from './wordpress_hold.ts';
import {
  keyOf,
  type PassInput,
  type Tally,
  type WordPressReconcileDeps,
  type WordPressSiteInput,
} from './wordpress_pass.ts';
import { propagate } from './wordpress_repair.ts';

/**
 * After a complete pass: links whose post claimed another code and whose own post never claimed them back are
 * filed for review (never made gone by an ID).
 */
export async function reviewDetachedLinks(
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

/** Links a stretch of the absent-post search covers: about 0.2 s of Postgres warm (1 s cold) at ten million links. */
export const ABSENT_STRETCH = 50_000;

/** The site's live links whose post the listing lacks, a stretch of its post IDs at a time, `beat` after each. */
async function listAbsentLinks(
  deps: WordPressReconcileDeps,
  input: PassInput,
  beat: () => void,
  stretch: number,
): Promise<LinkRow[]> {
  const absent: LinkRow[] = [];
  const startedAt = new Date(input.startedAtMs);
  let afterPostId = 0;
  for (;;) {
    const throughPostId = await findPostIdStretchEnd(deps.sql, {
      site: input.site,
      afterPostId,
      span: stretch,
    });
    absent.push(
      ...(await listLinksAbsentFromListing(deps.sql, {
        runId: input.runId,
        site: input.site,
        startedAt,
        afterPostId,
        throughPostId,
      })),
    );
    beat();
    if (throughPostId === null) return absent;
    afterPostId = throughPostId;
  }
}

/**
 * After a complete listing: live links of posts WordPress no longer has (deleted for good) become gone. In
 * migration mode an absent post ID proves nothing (IDs were reassigned): such links are filed for review.
 */
export async function reconcileAbsentPosts(
  deps: WordPressReconcileDeps,
  input: PassInput,
  options: {
    /** The links of posts the listing was asked for by ID and does not have (one post's reconciliation). */
    only?: LinkRow[];
    /** Called between the stretches of a whole site's links (the activity's heartbeat). */
    beat?: () => void;
    /** Links a stretch covers (ABSENT_STRETCH). */
    stretch?: number;
  } = {},
): Promise<void> {
  // The site's marks were just written page by page: with the statistics of an earlier moment (the Bitly pass
  // analyzes the table while it holds no WordPress mark) the planner takes the run to have none and anti-joins
  // them by reading every one of them once per link: over 20 s per site at 100,000 links, past the activity's
  // heartbeat timeout, so the leg was retried without end (bench/reconcile_scale.ts found it).
  const { only, beat = () => {}, stretch = ABSENT_STRETCH } = options;
  if (!only) await analyzeMarks(deps.sql);
  const absent = only ?? (await listAbsentLinks(deps, input, beat, stretch));
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
