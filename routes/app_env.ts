import type { Tracer } from '@opentelemetry/api';
import type { Ga4ClickFeed } from '../lib/analytics/ga4_click_feed.ts';
import type { StoredApiKey } from '../lib/auth/api_keys.ts';
import type { ClickRecorder } from '../lib/clicks/click_buffer.ts';
import type { VendorClickSource } from '../lib/clicks/link_stats.ts';
import type { DrainState } from '../lib/health/drain_state.ts';
import type { RedirectAnswerer } from '../lib/redirect/answer_redirect.ts';
import type { HostRouting } from '../lib/redirect/host_routing.ts';
import type { LinkResolver } from '../lib/redirect/link_resolver.ts';
import type { ServingStore } from '../lib/redirect/serving_store.ts';
import type { SafetyScanner } from '../lib/safety/safety_scanner.ts';
import type { Config } from '../lib/shared/config.ts';
import type { Logger } from '../lib/shared/logger.ts';
import type { Metrics } from '../lib/shared/metrics.ts';
import type { RateLimits } from '../lib/shared/rate_limits.ts';
import type { Sql } from '../lib/stores/sql.ts';
import type { CanonicalTargetPolicy } from '../lib/targets/target_rule.ts';
import type { AdoptionGateway } from '../lib/temporal/adoption_gateway.ts';
import type { ArchiveStarter } from '../lib/temporal/archive_starter.ts';
import type { OpsGateway } from '../lib/temporal/ops_gateway.ts';
import type { WorkflowGateway } from '../lib/temporal/workflow_gateway.ts';

/** Per-request values routes share through Hono's context. */
export interface AppEnv {
  Variables: {
    requestId: string;
    apiKey: StoredApiKey;
  };
}

/** Everything the web tier's routes are given; built once per process by server/web_deps.ts. */
export interface WebDeps {
  config: Config;
  /** THE hot path: answers short-host requests (the Hono route here and the Node fast path share it). */
  redirects: RedirectAnswerer;
  /** Which host serves which path (split short and app hosts). */
  hostRouting: HostRouting;
  sql: Sql;
  logger: Logger;
  metrics: Metrics;
  /**
   * The /metrics text when it is not this process's registry alone: with WEB_CONCURRENCY > 1, every web
   * process's series gathered by the primary (server/web_cluster.ts). Absent: `metrics.registry.metrics()`.
   */
  metricsText?: () => Promise<string>;
  resolver: LinkResolver;
  /** The serving store behind the resolver (REDIS_URL or Upstash), if any; reconciliation reads it. */
  servingStore?: ServingStore;
  /** The click buffer: redirects record into it, it writes click_counts in batches (flushed in close()). */
  clicks: ClickRecorder;
  /** GA4 forwarding of written clicks (GA4_MEASUREMENT_ID + GA4_API_SECRET); absent when off. */
  ga4?: Ga4ClickFeed;
  workflows: WorkflowGateway;
  /** Operations workflows: re-scans, reconciliation and failover. */
  ops: OpsGateway;
  targetPolicy: CanonicalTargetPolicy;
  /** Checks destinations at creation (scheme, addresses, look-alikes, blocklist, Safe Browsing). */
  safety: SafetyScanner;
  /** Limits on link creation and login (Redis-backed when REDIS_URL is set). */
  rateLimits: RateLimits;
  /** A vendor's stored per-day counts of a link (Bitly, pulled on a schedule), shown beside ours in stats. */
  vendorClicks?: VendorClickSource;
  /** Adoption workflows: backfill runs, WordPress reconciliation, mass retargets. */
  adoption: AdoptionGateway;
  /** Starts a new destination's archived-copy workflow; absent with ARCHIVE_MODE=off or without Temporal. */
  archive?: ArchiveStarter;
  /** The WordPress webhook secret: WORDPRESS_WEBHOOK_SECRET, else the one generated on first run. */
  getWebhookSecret(): Promise<string>;
  /** Stops background work and closes connections (not the sql pool, which the caller owns). */
  close(): Promise<void>;
  /** Set on SIGTERM before anything stops: /readyz then answers 503 (draining) while requests still flow. */
  drain?: DrainState;
  /** With tracing on (boot/tracing.ts): API and UI requests get a server span. Absent: nothing is traced. */
  tracer?: Tracer;
}
