import type { Tracer } from '@opentelemetry/api';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { createConfiguredGa4Feed } from '../lib/analytics/ga4_click_feed.ts';
import { createStoredVendorClicks } from '../lib/analytics/vendor_clicks.ts';
import { WEBHOOK_SECRET_SETTING } from '../lib/auth/bootstrap.ts';
import { registerPasswordHashMetrics } from '../lib/auth/password_hash_metrics.ts';
import { createClickBuffer } from '../lib/clicks/click_buffer.ts';
import { registerDomainWatchGauges } from '../lib/domains/domain_watch_metrics.ts';
import { getDomainWatchOverview } from '../lib/domains/domain_watch_overview.ts';
import { createDrainState } from '../lib/health/drain_state.ts';
import { drainBackgroundSyncs } from '../lib/propagation/sync_after_change.ts';
import { createRedirectAnswerer } from '../lib/redirect/answer_redirect.ts';
import { createConfiguredResolver } from '../lib/redirect/create_resolver.ts';
import { createHostRouting } from '../lib/redirect/host_routing.ts';
import type { LayeredResolver } from '../lib/redirect/layered_resolver.ts';
import { createConfiguredSafetyScanner, type SafetyScanner } from '../lib/safety/safety_scanner.ts';
import type { Config } from '../lib/shared/config.ts';
import { UnavailableError } from '../lib/shared/errors.ts';
import type { Logger } from '../lib/shared/logger.ts';
import { createMetrics, type Metrics } from '../lib/shared/metrics.ts';
import { createRateLimits } from '../lib/shared/rate_limits.ts';
import type { SharedLimiterChannel } from '../lib/shared/shared_limiter.ts';
import { getSetting } from '../lib/stores/settings_store.ts';
import { createSql, type Sql } from '../lib/stores/sql.ts';
import { createCanonicalTargetPolicy } from '../lib/targets/target_rule.ts';
import type { AdoptionGateway } from '../lib/temporal/adoption_gateway.ts';
import type { ArchiveStarter } from '../lib/temporal/archive_starter.ts';
import type { TemporalConnectionOptions } from '../lib/temporal/connection_options.ts';
import type { OpsGateway } from '../lib/temporal/ops_gateway.ts';
import type { TemporalClient } from '../lib/temporal/temporal_client.ts';
import { createUnavailableAdoptionGateway } from '../lib/temporal/unavailable_adoption_gateway.ts';
import {
  createUnavailableGateway,
  createUnavailableOpsGateway,
} from '../lib/temporal/unavailable_gateways.ts';
import type { WorkflowGateway } from '../lib/temporal/workflow_gateway.ts';
import type { WebDeps } from '../routes/app_env.ts';
import { redirectPages } from '../routes/redirect.tsx';

export type { WebDeps };

/** Builds the web tier's dependencies from configuration and an open pool. */
export async function createWebDeps(
  config: Config,
  base: {
    sql: Sql;
    logger: Logger;
    metrics?: Metrics;
    workflows?: WorkflowGateway;
    ops?: OpsGateway;
    adoption?: AdoptionGateway;
    safety?: SafetyScanner;
    /** A resolver shared with a worker in the same process (the caller closes it); default: built here. */
    resolver?: LayeredResolver;
    /**
     * How to reach Temporal (boot/temporal_connection.ts); default: from `config.temporal.settings` alone (no
     * profile file, no TEMPORAL_GRPC_META_* headers), as in-process tests configure it.
     */
    temporalConnection?: TemporalConnectionOptions;
    /** The primary's shared rate-limit counters, for a web process of WEB_CONCURRENCY > 1 without Redis. */
    sharedLimiter?: SharedLimiterChannel;
    /** The process's tracing (boot/tracing.ts), when OTEL_EXPORTER_OTLP_* is set: request spans, traced starts. */
    tracing?: { tracer: Tracer; clientInterceptors: WorkflowClientInterceptor[] };
  },
): Promise<WebDeps> {
  const metrics = base.metrics ?? createMetrics({ defaults: true });
  registerPasswordHashMetrics(metrics.registry);
  // What the worker's domain watch last read, from Postgres at scrape time (the alerts need it from either process).
  registerDomainWatchGauges(metrics.registry, () => getDomainWatchOverview(base.sql));
  const ownResolver = base.resolver
    ? undefined
    : createConfiguredResolver(config, { sql: base.sql, metrics, logger: base.logger, role: 'web' });
  const resolver = base.resolver ?? ownResolver!;
  // One Temporal connection for the process, shared by both gateways; imported lazily: the web tier must
  // start (and redirect) even where the Temporal client cannot load.
  let temporal: TemporalClient | undefined;
  let workflows = base.workflows;
  let ops = base.ops;
  let adoption = base.adoption;
  let archive: ArchiveStarter | undefined;
  if (!workflows || !ops || !adoption || config.archive.mode !== 'off') {
    try {
      const { createTemporalClient } = await import('../lib/temporal/temporal_client.ts');
      const { createWorkflowGateway } = await import('../lib/temporal/workflow_gateway.ts');
      const { createOpsGateway } = await import('../lib/temporal/ops_gateway.ts');
      const { createAdoptionGateway } = await import('../lib/temporal/adoption_gateway.ts');
      const { createArchiveStarter } = await import('../lib/temporal/archive_starter.ts');
      const { loadTemporalConnectionOptions } = await import('../lib/temporal/connection_options.ts');
      const options =
        base.temporalConnection ??
        loadTemporalConnectionOptions({ settings: config.temporal.settings, env: {} });
      temporal = createTemporalClient({
        connection: options.client,
        namespace: options.namespace,
        ...(base.tracing ? { interceptors: base.tracing.clientInterceptors } : {}),
      });
      const seam = { temporal, taskQueue: config.temporal.taskQueue, logger: base.logger };
      workflows ??= createWorkflowGateway(seam);
      ops ??= createOpsGateway(seam);
      adoption ??= createAdoptionGateway(seam);
      if (config.archive.mode !== 'off') archive = createArchiveStarter(seam);
    } catch (error) {
      base.logger.error({ err: error }, 'Temporal client unavailable; webhooks will answer 503');
      workflows ??= createUnavailableGateway((error as Error).message);
      ops ??= createUnavailableOpsGateway((error as Error).message);
      adoption ??= createUnavailableAdoptionGateway((error as Error).message);
    }
  }
  let webhookSecret: string | undefined = config.wordpressWebhookSecret;
  const rateLimits = createRateLimits(
    config,
    base.logger,
    base.sharedLimiter ? { shared: base.sharedLimiter } : {},
  );
  // Clicks write through their own single connection, so a flush never holds a connection the redirect path
  // is waiting for (measured: flushes on the shared pool took the Postgres path's p99 from ~20 ms to ~250 ms).
  const clicksSql = config.databaseUrl
    ? createSql({ url: config.databaseUrl, max: 1, prepare: false, applicationName: 'lifeline-clicks' })
    : undefined;
  // GA4 (when configured) is fed from the click buffer's written batches, never from the redirect itself.
  const ga4 = createConfiguredGa4Feed(config, { resolver, metrics, logger: base.logger });
  const clicks = createClickBuffer({
    sql: clicksSql ?? base.sql,
    metrics,
    logger: base.logger,
    flushIntervalMs: config.clicks.flushIntervalMs,
    maxFlushIntervalMs: config.clicks.maxFlushIntervalMs,
    maxKeys: config.clicks.maxKeys,
    ...(ga4 ? { onWritten: (rows) => ga4.written(rows) } : {}),
  });
  return rewireWebDeps({
    config,
    sql: base.sql,
    logger: base.logger,
    metrics,
    resolver,
    servingStore: resolver.store,
    clicks,
    ...(ga4 ? { ga4 } : {}),
    workflows,
    ops,
    adoption,
    ...(archive ? { archive } : {}),
    targetPolicy: createCanonicalTargetPolicy(config),
    safety: base.safety ?? createConfiguredSafetyScanner(config, base),
    rateLimits,
    drain: createDrainState(),
    ...(base.tracing ? { tracer: base.tracing.tracer } : {}),
    // Bitly's per-day counts as the scheduled pull stored them: a stats request never calls Bitly.
    vendorClicks: createStoredVendorClicks(base.sql),
    async getWebhookSecret() {
      webhookSecret ??= (await getSetting<string>(base.sql, WEBHOOK_SECRET_SETTING)) ?? undefined;
      if (!webhookSecret) throw new UnavailableError('No webhook secret is configured yet.', 30);
      return webhookSecret;
    },
    async close() {
      await clicks.close();
      // After the buffer's last flush, so the clicks it wrote still go out (what cannot is counted).
      await ga4?.close();
      await clicksSql?.end({ timeout: 5 });
      await drainBackgroundSyncs(workflows);
      await workflows.close();
      await ops.close();
      await temporal?.close();
      await rateLimits.close();
      await ownResolver?.close();
    },
  });
}

/**
 * Builds the parts derived from the others: the redirect answerer (shared by the Hono route and the Node fast
 * path, so one memo and one set of tallies per process) and the host routing. Tests that swap the
 * configuration, metrics or click buffer call it again on their variant.
 */
export function rewireWebDeps<T extends Omit<WebDeps, 'redirects' | 'hostRouting'>>(
  deps: T,
): T & Pick<WebDeps, 'redirects' | 'hostRouting'> {
  return {
    ...deps,
    redirects: createRedirectAnswerer({ ...deps, pages: redirectPages }),
    hostRouting: createHostRouting(deps.config),
  };
}
