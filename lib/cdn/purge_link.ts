import { TransientFailure } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { type CdnPurger, type PurgeFailure, toLinkPurgePaths } from './cdn_purger.ts';

export interface PurgeLinkResult {
  /** The CDN purged through, or null when none is configured (nothing to do). */
  provider: string | null;
  purged: string[];
  /** Paths the CDN refused for good (a bad request): logged; the cached copy then lives out its TTL. */
  refused: PurgeFailure[];
  /** When the call was made (epoch ms), for latency measurements. */
  atMs: number;
}

/**
 * Purges a changed link's paths (`/code` and its `/code+` preview) from the configured CDN's cache, so a shared
 * cache (`REDIRECT_CACHE_CONTROL: public, s-maxage=N`) never serves the old answer past the change. A transient
 * failure (rate limit, 5xx, timeout) is thrown as a TransientFailure after the purger's own retries, so the
 * activity retries durably (after the CDN's Retry-After); a refusal is logged and reported, not retried.
 */
export async function purgeLinkFromCdn(
  deps: { cdn?: CdnPurger | undefined; logger: Logger },
  code: string,
): Promise<PurgeLinkResult> {
  const atMs = Date.now();
  if (!deps.cdn) return { provider: null, purged: [], refused: [], atMs };
  const result = await deps.cdn.purgePaths(toLinkPurgePaths(code));
  const retryable = result.failed.filter((f) => f.retryable);
  if (retryable.length > 0) {
    const waits = retryable.map((f) => f.retryAfterMs).filter((ms): ms is number => ms !== undefined);
    throw new TransientFailure(
      `CDN purge of ${retryable.flatMap((f) => f.items).join(', ')} failed: ${retryable[0]!.reason}`,
      'CdnPurgeFailed',
      waits.length > 0 ? Math.max(...waits) : undefined,
    );
  }
  const refused = result.failed;
  if (refused.length > 0) {
    deps.logger.error(
      { code, provider: deps.cdn.name, refused: refused.map((f) => ({ items: f.items, reason: f.reason })) },
      'the CDN refused to purge a changed link; its cached copy lives out its TTL',
    );
  }
  return { provider: deps.cdn.name, purged: result.purged, refused, atMs };
}
