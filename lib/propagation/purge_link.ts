// Purge: the CDN's cached answers of a changed link, the CDN's copy of it (the purgers are lib/cdn's clients).
import { type CdnPurger, type PurgeFailure, toLinkPurgePaths } from '../cdn/cdn_purger.ts';
import { TransientFailure } from '../shared/errors.ts';
import { DEFAULT_DOMAIN, keyCode, keyDomain } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';

/**
 * The CDN purgers of a deployment: `cdn` for the default short domain, `cdnByDomain` for each other one (by its
 * host name), each building URLs on its own domain (lib/cdn/configured_cdn_purger.ts).
 */
export interface CdnPurgeDeps {
  cdn?: CdnPurger | undefined;
  cdnByDomain?: ReadonlyMap<string, CdnPurger> | undefined;
  logger: Logger;
}

/** The purger of a link's domain: undefined when none is configured (no CDN, or a domain no longer served). */
function purgerOf(deps: CdnPurgeDeps, domain: string): CdnPurger | undefined {
  return domain === DEFAULT_DOMAIN ? deps.cdn : deps.cdnByDomain?.get(domain);
}

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
 * Purges a changed link's paths (`/code` and its `/code+` preview, on the link's own short domain: the purger of
 * its key's domain) from the configured CDN's cache, so a shared
 * cache (`REDIRECT_CACHE_CONTROL: public, s-maxage=N`) never serves the old answer past the change. A transient
 * failure (rate limit, 5xx, timeout) is thrown as a TransientFailure after the purger's own retries, so the
 * activity retries durably (after the CDN's Retry-After); a refusal is logged and reported, not retried.
 */
export async function purgeLinkFromCdn(deps: CdnPurgeDeps, code: string): Promise<PurgeLinkResult> {
  const atMs = Date.now();
  const cdn = purgerOf(deps, keyDomain(code));
  if (!cdn) return { provider: null, purged: [], refused: [], atMs };
  const result = await cdn.purgePaths(toLinkPurgePaths(keyCode(code)));
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
      { code, provider: cdn.name, refused: refused.map((f) => ({ items: f.items, reason: f.reason })) },
      'the CDN refused to purge a changed link; its cached copy lives out its TTL',
    );
  }
  return { provider: cdn.name, purged: result.purged, refused, atMs };
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
 * purgeLinkFromCdn for many links at once (the sync queue's batches): each domain's codes' paths in one purgePaths
 * call of that domain's purger, which splits them into the CDN's own batch sizes. Never throws for a CDN failure:
 * the codes to try again are returned, so one link's failure does not hold the others.
 */
export async function purgeLinksFromCdn(
  deps: CdnPurgeDeps,
  codes: readonly string[],
): Promise<PurgeLinksResult> {
  const byDomain = new Map<string, string[]>();
  for (const code of codes) {
    const domain = keyDomain(code);
    const list = byDomain.get(domain);
    if (list) list.push(code);
    else byDomain.set(domain, [code]);
  }
  const total: PurgeLinksResult = { provider: deps.cdn?.name ?? null, purged: 0, retry: [], refused: [] };
  for (const [domain, keys] of byDomain) {
    const cdn = purgerOf(deps, domain);
    if (!cdn) {
      // No purger for this domain (no CDN, or a domain no longer served): nothing of ours cached there.
      continue;
    }
    const one = await purgeDomainLinks(cdn, deps.logger, keys);
    total.provider = cdn.name;
    total.purged += one.purged;
    total.retry.push(...one.retry);
    total.refused.push(...one.refused);
  }
  return total;
}

/** One domain's links through its purger (the paths are the codes' on that domain). */
async function purgeDomainLinks(
  cdn: CdnPurger,
  logger: Logger,
  codes: readonly string[],
): Promise<PurgeLinksResult> {
  const codeOfPath = new Map<string, string>();
  for (const code of codes) for (const path of toLinkPurgePaths(keyCode(code))) codeOfPath.set(path, code);
  const result = await cdn.purgePaths([...codeOfPath.keys()]);
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
    logger.error(
      { codes: [...refused], provider: cdn.name },
      'the CDN refused to purge changed links; their cached copies live out their TTL',
    );
  }
  const failedCodes = new Set([...retry.keys(), ...refused]);
  return {
    provider: cdn.name,
    purged: codes.filter((c) => !failedCodes.has(c)).length,
    retry: [...retry.values()],
    refused: [...refused],
  };
}
