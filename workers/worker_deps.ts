import { Registry } from 'prom-client';
import type { ActivityDeps } from '../activities/deps.ts';
import { createInternetArchive } from '../lib/archive/internet_archive.ts';
import { createOwnHostTest } from '../lib/archive/own_hosts.ts';
import { WEBHOOK_SECRET_SETTING } from '../lib/auth/bootstrap.ts';
import type { CdnPurger } from '../lib/cdn/cdn_purger.ts';
import {
  createConfiguredCdnPurger,
  createConfiguredDomainCdnPurgers,
} from '../lib/cdn/configured_cdn_purger.ts';
import {
  createDestinationCheckDeps,
  type DestinationCheckDeps,
} from '../lib/destinations/destination_check_deps.ts';
import { createDomainWatchDeps, type DomainWatchOverrides } from '../lib/domains/domain_watch_deps.ts';
import type { DnsAdapter } from '../lib/failover/dns_adapter.ts';
import { createFrontDeps } from '../lib/failover/front_deps.ts';
import { createProbeDeps } from '../lib/prober/probe_deps.ts';
import { DEFAULT_SYNC_QUEUE_SETTINGS, type SyncQueueSettings } from '../lib/propagation/sync_link_batch.ts';
import type { WordPressListingDeps } from '../lib/reconcile/wordpress_listing.ts';
import type { LinkResolver } from '../lib/redirect/link_resolver.ts';
import type { ServingReplica } from '../lib/redirect/serving_replica.ts';
import { createConfiguredSafetyScanner, type SafetyScanner } from '../lib/safety/safety_scanner.ts';
import type { Config } from '../lib/shared/config.ts';
import type { Logger } from '../lib/shared/logger.ts';
import { createArchiveSaveCounter, createWebhookDeliveryCounter } from '../lib/shared/metrics.ts';
import { createOutgoingFetch } from '../lib/shared/outgoing_request.ts';
import { getSetting } from '../lib/stores/settings_store.ts';
import type { Sql } from '../lib/stores/sql.ts';
import { createCanonicalTargetPolicy } from '../lib/targets/target_rule.ts';
import { createVendorDeps, type VendorDepsOverrides } from '../lib/vendors/vendor_deps.ts';
import { createWebhookDeliveryDeps, type WebhookDeliveryDeps } from '../lib/webhooks/webhook_deps.ts';

/**
 * THE builder of the activities' dependencies from configuration, used by the worker entry, `npm start` and the
 * test harness alike (each passes its pool and resolver; tests pass shorter vendor timings).
 */
export function createWorkerDeps(
  config: Config,
  base: {
    sql: Sql;
    logger: Logger;
    /** The resolver whose refreshes write the serving store and announce changes (shared with the web tier
     * when both run in one process, so a refresh also drops this process's LRU entry). */
    resolver: LinkResolver;
    /** The serving store behind the resolver, read directly by reconciliation. */
    servingStore?: ServingReplica | undefined;
    vendors?: VendorDepsOverrides;
    dnsAdapter?: DnsAdapter;
    safety?: SafetyScanner;
    /** Test overrides of the WordPress listing client (timeouts, fetch). */
    wordpress?: Partial<WordPressListingDeps>;
    /** A purger other than the configured one (tests). */
    cdn?: CdnPurger;
    /** Other short domains' purgers other than the configured ones (tests), by host name. */
    cdnByDomain?: ReadonlyMap<string, CdnPurger>;
    /** Sync-queue tuning other than the defaults (tests: shorter backoff). */
    syncQueue?: Partial<SyncQueueSettings>;
    /** The domain watch's resolver and trusted roots (tests: made-up names, their own CA). */
    domainWatch?: DomainWatchOverrides;
    /**
     * The worker's /metrics registry: the prober's metrics and lifeline_archive_saves_total go there; absent: a
     * registry of their own (tests read it).
     */
    registry?: Registry;
    /** Destination checks: the metrics counter; tests: a resolver for made-up names, a clock. */
    destinations?: Omit<Parameters<typeof createDestinationCheckDeps>[1], 'sql' | 'logger'>;
    /** Outgoing webhooks: a clock (tests). */
    webhooks?: Partial<Pick<WebhookDeliveryDeps, 'now'>>;
  },
): ActivityDeps {
  const registry = base.registry ?? new Registry();
  const archiveSaves = createArchiveSaveCounter(registry);
  const webhookAttempts = createWebhookDeliveryCounter(registry);
  return {
    sql: base.sql,
    logger: base.logger,
    codeLength: config.codeLength,
    resolver: base.resolver,
    ...(base.servingStore ? { servingStore: base.servingStore } : {}),
    safety: base.safety ?? createConfiguredSafetyScanner(config, { sql: base.sql, logger: base.logger }),
    vendors: createVendorDeps(config, base.logger, base.vendors),
    front: createFrontDeps(config, base.dnsAdapter ? { dnsAdapter: base.dnsAdapter } : {}),
    targetPolicy: createCanonicalTargetPolicy(config),
    wordpress: {
      async getSecret() {
        const secret =
          config.wordpressWebhookSecret ?? (await getSetting<string>(base.sql, WEBHOOK_SECRET_SETTING));
        if (!secret) throw new Error('no WordPress webhook secret is configured yet');
        return secret;
      },
      restUrls: config.wordpressRestUrls,
      outgoing: config.outgoing,
      ...base.wordpress,
    },
    wordpressBreaker: config.wordpressBreaker,
    ...withCdn(base.cdn ?? createConfiguredCdnPurger(config, { logger: base.logger })),
    cdnByDomain: base.cdnByDomain ?? createConfiguredDomainCdnPurgers(config, { logger: base.logger }),
    syncQueue: { ...DEFAULT_SYNC_QUEUE_SETTINGS, batchSize: config.syncQueue.batchSize, ...base.syncQueue },
    expiryBatchSize: config.expiry.batchSize,
    domainWatch: createDomainWatchDeps(config, base.logger, base.domainWatch),
    probe: createProbeDeps(config, base.registry),
    archiveCopies: config.archive.mode !== 'off',
    destinations: {
      archive: {
        mode: config.archive.mode,
        internetArchive:
          config.archive.mode === 'off'
            ? undefined
            : createInternetArchive({
                saveBaseUrl: config.archive.saveBaseUrl,
                availabilityBaseUrl: config.archive.availabilityBaseUrl,
                keys: config.archive.keys,
                fetch: createOutgoingFetch(config.outgoing),
              }),
        isOwnHost: createOwnHostTest(config.safety.trustedHosts),
        ratePerMinute: config.archive.ratePerMinute,
        count: (outcome) => archiveSaves.inc({ outcome }),
      },
      acting: {
        ownHosts: config.safety.trustedHosts,
        autoRetargetMoved: config.deadDestinations.autoRetargetMoved,
      },
    },
    destinationChecks: createDestinationCheckDeps(config, {
      sql: base.sql,
      logger: base.logger,
      ...base.destinations,
    }) satisfies DestinationCheckDeps,
    webhooks: {
      ...createWebhookDeliveryDeps(config, {
        sql: base.sql,
        logger: base.logger,
        countAttempt: (outcome) => webhookAttempts.inc({ outcome }),
      }),
      ...base.webhooks,
    },
    archive: {
      shortBaseUrl: config.shortBaseUrl,
      shortDomains: config.shortDomains,
      unknownHost: config.unknownHost,
      redirect: config.redirect,
      rootRedirectUrl: config.rootRedirectUrl,
      escrow: { dir: config.escrow.dir, keep: config.escrow.keep, signingKey: config.escrow.signingKey },
      snapshot: { dir: config.snapshot.dir, formats: config.snapshot.formats, keep: config.snapshot.keep },
    },
  };
}

const withCdn = (cdn: CdnPurger | undefined) => (cdn ? { cdn } : {});
