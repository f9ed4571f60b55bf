import type { FrontDeps } from '../lib/failover/front_deps.ts';
import type { ServingReplica } from '../lib/reconcile/serving_replica.ts';
import type { LinkResolver } from '../lib/redirect/link_resolver.ts';
import type { SafetyScanner } from '../lib/safety/safety_scanner.ts';
import type { Logger } from '../lib/shared/logger.ts';
import type { Sql } from '../lib/stores/sql.ts';
import type { VendorDeps } from '../lib/vendors/vendor_deps.ts';

/** What activities are given by the worker entry (and by tests, with real implementations). */
export interface ActivityDeps {
  sql: Sql;
  logger: Logger;
  codeLength: number;
  /** Purges cached copies of a link after a change (in-process caches, serving store). */
  resolver: LinkResolver;
  /** Checks destinations (publish-time scans and scheduled re-scans). */
  safety: SafetyScanner;
  /** Vendor replicas (Bitly) and their sync tuning; absent: no vendor is synced. */
  vendors?: VendorDeps;
  /** The serving store, read directly by reconciliation (absent: no serving store configured). */
  servingStore?: ServingReplica;
  /** Vendor failover (verification, DNS); absent: failover activities refuse to run. */
  front?: FrontDeps;
}

/**
 * Drops and rewrites a changed link's cached copies right after its change commits, so readers see it at once
 * rather than when the link's sync workflow runs. Best effort: a store or bus outage is logged, and the sync
 * workflow's own refresh (which retries) and reconciliation still bring every copy in line.
 */
export async function refreshCaches(deps: ActivityDeps, code: string): Promise<void> {
  try {
    await deps.resolver.refresh(code);
  } catch (error) {
    deps.logger.warn(
      { err: error, code },
      'cache refresh after a change failed; the sync workflow retries it',
    );
  }
}
