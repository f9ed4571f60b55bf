import type { ArchiveDeps } from '../lib/archive/archive_deps.ts';
import type { CdnPurger } from '../lib/cdn/cdn_purger.ts';
import type { DestinationDeps } from '../lib/destinations/act_on_destination.ts';
import type { DestinationCheckDeps } from '../lib/destinations/destination_check_deps.ts';
import type { DomainWatchDeps } from '../lib/domains/domain_watch_deps.ts';
import type { FrontDeps } from '../lib/failover/front_deps.ts';
import type { ProbeDeps } from '../lib/prober/probe_deps.ts';
import type { SyncQueueSettings } from '../lib/propagation/sync_link_batch.ts';
import type { BreakerSettings } from '../lib/publishing/mass_change_breaker.ts';
import type { WordPressListingDeps } from '../lib/reconcile/wordpress_listing.ts';
import type { LinkResolver } from '../lib/redirect/link_resolver.ts';
import type { RedirectSettings } from '../lib/redirect/redirect_policy.ts';
import type { ServingReplica } from '../lib/redirect/serving_replica.ts';
import type { SafetyScanner } from '../lib/safety/safety_scanner.ts';
import type { SnapshotFormat } from '../lib/shared/config.ts';
import type { Logger } from '../lib/shared/logger.ts';
import type { Sql } from '../lib/stores/sql.ts';
import type { CanonicalTargetPolicy } from '../lib/targets/target_rule.ts';
import type { VendorDeps } from '../lib/vendors/vendor_deps.ts';
import type { WebhookDeliveryDeps } from '../lib/webhooks/webhook_deps.ts';

/** What activities are given: built once by workers/worker_deps.ts (worker, `npm start`, tests). */
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
  /**
   * Where links may point (ALLOWED_TARGET_HOSTS, not our short host): permalinks, Bitly imports, backfill,
   * retarget, WordPress repairs.
   */
  targetPolicy: CanonicalTargetPolicy;
  /** The plugin's signed listing (WordPress reconciliation): the shared secret and WORDPRESS_REST_URLS. */
  wordpress: WordPressListingDeps;
  /** The breaker on mass change by WordPress (WORDPRESS_BREAKER_SHARE, WORDPRESS_BREAKER_MIN). */
  wordpressBreaker?: BreakerSettings;
  /** Escrow exports and static snapshots: where they go and how answers are decided; absent: they refuse. */
  archive?: EscrowDeps;
  /** The CDN whose cache a changed link is purged from (CDN_PURGE_PROVIDER); absent: none. */
  cdn?: CdnPurger;
  /** Each other short domain's purger, by host name (its URLs on that domain; its own zone or distribution). */
  cdnByDomain?: ReadonlyMap<string, CdnPurger>;
  /** How the sync queue is drained (SYNC_BATCH_SIZE); absent: the defaults. */
  syncQueue?: SyncQueueSettings;
  /** Links the expiry sweeper expires per transaction (EXPIRY_BATCH_SIZE); absent: the default. */
  expiryBatchSize?: number;
  /** The watch of our own domains (RDAP, certificates, Safe Browsing); absent: its activities refuse. */
  domainWatch?: DomainWatchDeps;
  /** The black-box prober (PROBE_*); absent: its activity refuses to run. */
  probe?: ProbeDeps;
  /**
   * ARCHIVE_MODE is not off: links minted or retargeted by activities (WordPress publishes and updates, mass
   * retargets) are queued for their archived copy in the transaction that changes them (ADR 0076).
   */
  archiveCopies: boolean;
  /**
   * Dead destinations: the Internet Archive's client and mode (ARCHIVE_MODE) with the save counter, and what
   * acting on a verdict needs (our own hosts, DEAD_MOVED_AUTO_RETARGET).
   */
  destinations: {
    archive: ArchiveDeps['archive'];
    acting: DestinationDeps['destinations'];
  };
  /** Destination checks (link rot): the rule, the politeness gate, the settings; absent: they refuse. */
  destinationChecks?: DestinationCheckDeps;
  /** Outgoing webhooks' drainer: the rule-bound fetch, WEBHOOK_* settings, the attempts counter (ADR 0082). */
  webhooks: WebhookDeliveryDeps;
}

/** What escrow exports and static snapshots need besides the pool (from configuration). */
export interface EscrowDeps {
  shortBaseUrl: string;
  /** SHORT_DOMAINS, the default first: a static snapshot per short domain (ADR 0078). */
  shortDomains?: readonly string[];
  /** SHORT_DOMAIN_UNKNOWN_HOST, for the all-domains nginx configuration. */
  unknownHost?: 'default' | 'not_found';
  redirect: RedirectSettings;
  rootRedirectUrl: string | undefined;
  escrow: { dir: string | undefined; keep: number; signingKey?: string | undefined };
  snapshot: { dir: string | undefined; formats: readonly SnapshotFormat[]; keep: number };
}
