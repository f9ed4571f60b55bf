import type { RedirectSettings } from '../redirect/redirect_policy.ts';
import type { Config } from '../shared/config.ts';
import { DEFAULT_DOMAIN, keyDomain } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import { type BitlyOptions, type BitlyProvider, createBitlyProvider } from './bitly.ts';

/** What the vendor-sync activities need (ActivityDeps.vendors). */
export interface VendorDeps {
  /** The Bitly replica of the default short domain's links, when BITLY_* is configured. */
  bitly: BitlyProvider | undefined;
  /**
   * The Bitly replica of each other short domain's links (BITLY_DOMAINS), by its stored domain (its host name);
   * a short domain without one keeps its links off Bitly (ADR 0078).
   */
  bitlyByDomain?: ReadonlyMap<string, BitlyProvider>;
  /** Our public short base and redirect policy: a vendor copy answers what our resolver answers. */
  shortBaseUrl: string;
  redirect: RedirectSettings;
  /** Backoff of transient vendor failures (5xx, timeouts): base doubled per attempt, capped. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** With the in-house front, how long a first publish waits for Bitly before activating anyway. */
  publishWaitMs: number;
  /**
   * ARCHIVE_LINKS_IN_HOUSE: links a backfill marked in-house only (vendor state `inhouse`) are never created on
   * Bitly, and reconciliation does not count them missing there. Off: they are created like any other link.
   */
  archiveLinksInHouse?: boolean;
}

export interface VendorDepsOverrides {
  bitly?: BitlyOptions;
  retryBaseMs?: number;
  retryMaxMs?: number;
  publishWaitMs?: number;
}

/** The Bitly replica of a link's key (lib/shared/link_key.ts): its short domain's, or undefined when it has none. */
export function bitlyForKey(
  vendors: Pick<VendorDeps, 'bitly' | 'bitlyByDomain'> | undefined,
  key: string,
): BitlyProvider | undefined {
  const domain = keyDomain(key);
  return domain === DEFAULT_DOMAIN ? vendors?.bitly : vendors?.bitlyByDomain?.get(domain);
}

/** Builds the vendor dependencies from configuration (tests pass shorter timings). */
export function createVendorDeps(
  config: Config,
  logger: Logger,
  overrides: VendorDepsOverrides = {},
): VendorDeps {
  return {
    bitly: config.bitly ? createBitlyProvider(config.bitly, { logger, ...overrides.bitly }) : undefined,
    bitlyByDomain: new Map(
      config.bitly
        ? [...config.bitlyDomains].map(([shortDomain, mapped]): [string, BitlyProvider] => [
            shortDomain,
            createBitlyProvider({ ...config.bitly!, ...mapped }, { logger, ...overrides.bitly }),
          ])
        : [],
    ),
    shortBaseUrl: config.shortBaseUrl,
    redirect: config.redirect,
    retryBaseMs: overrides.retryBaseMs ?? 1_000,
    retryMaxMs: overrides.retryMaxMs ?? 300_000,
    publishWaitMs: overrides.publishWaitMs ?? 20_000,
    archiveLinksInHouse: config.bitlyBudget.archiveLinksInHouse,
  };
}
