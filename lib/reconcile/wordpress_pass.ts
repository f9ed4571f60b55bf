// What one site's pass against its WordPress listing works with: its dependencies, input and running counts.

import type { BreakerSettings } from '../publishing/mass_change_breaker.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import type { SafetyScanner } from '../safety/safety_scanner.ts';
import type { Logger } from '../shared/logger.ts';
import type { Sql } from '../stores/sql.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import type { SyncQueueKicker } from '../temporal/link_sync.ts';
import type { WordPressListingDeps } from './wordpress_listing.ts';

export interface WordPressReconcileDeps {
  sql: Sql;
  logger: Logger;
  resolver: LinkResolver;
  safety: SafetyScanner;
  targetPolicy: CanonicalTargetPolicy;
  codeLength: number;
  /** Wakes the sync-queue drainer once a page's repairs (queued in their transaction) committed. */
  queue: SyncQueueKicker;
  wordpress: WordPressListingDeps;
  /** The breaker on mass change (WORDPRESS_BREAKER_SHARE, WORDPRESS_BREAKER_MIN); absent: the defaults. */
  wordpressBreaker?: BreakerSettings | undefined;
}

export interface WordPressSiteInput {
  /** The reconciliation run (marks and audit reasons). */
  runId: string;
  site: string;
  /** false: report drift only. */
  repair: boolean;
  /** When the run started: links minted after it are left to their own publish. */
  startedAtMs: number;
  /** The reconciliation workflow (a tripped breaker's hold names whom to signal). */
  workflowId?: string;
}

/** Counts a pass keeps across pages (and activity retries, in its heartbeat). */
export interface Tally {
  rebound: number;
  reviewed: number;
}

export type PassInput = WordPressSiteInput & { migrating: boolean; tally: Tally };

/** A post's key in reconcile_marks (side `wordpress`) and in a pass's repaired keys. */
export const keyOf = (site: string, postId: number) => `${site}:${postId}`;
