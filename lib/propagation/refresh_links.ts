// Refresh, for many links at once: the in-house copies of a bulk change, before the rest of its propagation.
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { forEachConcurrently } from '../shared/concurrency.ts';

/** Refreshes one at a time in flight per slot when the resolver has no batch refresh. */
const REFRESH_CONCURRENCY = 16;

/**
 * Brings many links' cached copies up to date with Postgres at once (mass changes: backfill, retarget,
 * WordPress reconciliation): the resolver's batch refresh when it has one (one Postgres read, pipelined
 * serving-store writes and announcements), else refreshes with bounded concurrency.
 */
export async function refreshLinks(resolver: LinkResolver, codes: readonly string[]): Promise<void> {
  if (codes.length === 0) return;
  if (resolver.refreshMany) {
    await resolver.refreshMany([...codes]);
    return;
  }
  await forEachConcurrently(codes, REFRESH_CONCURRENCY, (code) => resolver.refresh(code));
}
