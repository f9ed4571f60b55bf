// Purge: the CDN's cached answers of a changed link, the CDN's copy of it (the purgers are lib/cdn's clients).
import { type CdnPurger, type PurgeFailure, toLinkPurgePaths } from '../cdn/cdn_purger.ts';
import { TransientFailure } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';

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

/** What a purge of many links did: per code, whether it must be tried again (and after how long). */
export interface PurgeLinksResult {
  provider: string | null;
  purged: number;
  /** Codes whose paths the CDN could not purge yet (rate limit, 5xx, timeout): try these again. */
  retry: { code: string; reason: string; retryAfterMs?: number }[];
  /** Codes the CDN refused for good (logged; their cached copies live out their TTL). */
  refused: string[];
}

/**
 * purgeLinkFromCdn for many links at once (the sync queue's batches): every code's paths in one purgePaths call,
 * which the purgers split into the CDN's own batch sizes. Never throws for a CDN failure: the codes to try
 * again are returned, so one link's failure does not hold the others.
 */
export async function purgeLinksFromCdn(
  deps: { cdn?: CdnPurger | undefined; logger: Logger },
  codes: readonly string[],
): Promise<PurgeLinksResult> {
  if (!deps.cdn || codes.length === 0)
    return { provider: deps.cdn?.name ?? null, purged: 0, retry: [], refused: [] };
  const codeOfPath = new Map<string, string>();
  for (const code of codes) for (const path of toLinkPurgePaths(code)) codeOfPath.set(path, code);
  const result = await deps.cdn.purgePaths([...codeOfPath.keys()]);
  const retry = new Map<string, { code: string; reason: string; retryAfterMs?: number }>();
  const refused = new Set<string>();
  for (const failure of result.failed) {
    for (const item of failure.items) {
      const code = codeOfPath.get(item);
      if (code === undefined) continue;
      if (failure.retryable) {
        retry.set(code, {
          code,
          reason: `CDN purge failed: ${failure.reason}`,
          ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
        });
      } else refused.add(code);
    }
  }
  for (const code of retry.keys()) refused.delete(code);
  if (refused.size > 0) {
    deps.logger.error(
      { codes: [...refused], provider: deps.cdn.name },
      'the CDN refused to purge changed links; their cached copies live out their TTL',
    );
  }
  const failedCodes = new Set([...retry.keys(), ...refused]);
  return {
    provider: deps.cdn.name,
    purged: codes.filter((c) => !failedCodes.has(c)).length,
    retry: [...retry.values()],
    refused: [...refused],
  };
}
