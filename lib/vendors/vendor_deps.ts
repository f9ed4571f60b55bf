import type { RedirectSettings } from '../redirect/redirect_policy.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { type BitlyOptions, type BitlyProvider, createBitlyProvider } from './bitly.ts';

/** What the vendor-sync activities need (ActivityDeps.vendors). */
export interface VendorDeps {
  /** The Bitly replica, when BITLY_* is configured. */
  bitly: BitlyProvider | undefined;
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

/** Builds the vendor dependencies from configuration (tests pass shorter timings). */
export function createVendorDeps(
  config: Config,
  logger: Logger,
  overrides: VendorDepsOverrides = {},
): VendorDeps {
  return {
    bitly: config.bitly ? createBitlyProvider(config.bitly, { logger, ...overrides.bitly }) : undefined,
    shortBaseUrl: config.shortBaseUrl,
    redirect: config.redirect,
    retryBaseMs: overrides.retryBaseMs ?? 1_000,
    retryMaxMs: overrides.retryMaxMs ?? 300_000,
    publishWaitMs: overrides.publishWaitMs ?? 20_000,
    archiveLinksInHouse: config.bitlyBudget.archiveLinksInHouse,
  };
}
