import { describeScanResult, nextSafetyVerdict, type ScanResult } from '../safety/scan_result.ts';
import type { BackfilledLink } from '../stores/backfill_store.ts';

/** What a new post link needs of its post (a backfill's post, or one in WordPress's listing). */
export interface PostForNewLink {
  postId: number;
  permalink: string;
  title?: string | null;
  modifiedAt: string;
}

/** The safety columns a new link starts with: from the scan of its target, or unknown when none ran. */
export function firstSafety(scan: ScanResult | undefined, checkedAt: Date) {
  if (!scan) return { safety: 'unknown', safetyReason: null, safetyCheckedAt: null };
  return {
    safety: nextSafetyVerdict('unknown', scan),
    safetyReason: describeScanResult(scan),
    safetyCheckedAt: scan.complete ? checkedAt : null,
  };
}

/**
 * A post's new link as the archive backfill and WordPress's reconciliation write it: active, or pending when its
 * destination is blocked (as a first publish leaves it: editors see why).
 */
export function newPostLink(
  post: PostForNewLink,
  code: string,
  scan: ScanResult | undefined,
  checkedAt: Date,
): BackfilledLink {
  const safety = firstSafety(scan, checkedAt);
  return {
    code,
    targetUrl: post.permalink,
    status: safety.safety === 'blocked' ? 'pending' : 'active',
    ...safety,
    postId: post.postId,
    title: post.title ?? null,
    sourceVersion: new Date(post.modifiedAt),
  };
}
