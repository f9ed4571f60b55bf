// What the destination checks need, built once per worker from configuration: the rule, the politeness gate
// (one per process, so the per-host rate holds across batches), the user agent and the hosts to spare.
import dns from 'node:dns';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { createRuleLookup, type OutgoingLookup, type OutgoingRule } from '../shared/outgoing_request.ts';
import type { DestinationOutcome } from '../stores/destination_state_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { DestinationCheckerDeps } from './check_destination.ts';
import { durationMs } from './destination_verdict.ts';
import { HostGate } from './host_gate.ts';

export interface DestinationCheckSettings {
  /** DESTINATION_CHECK_INTERVAL in ms. */
  intervalMs: number;
  hostRate: number;
  ownHostRate: number;
  timeoutMs: number;
  /** Hosts never checked (and their subdomains). */
  excludedHosts: readonly string[];
  /** The newsroom's own hosts from configuration (SAFETY_TRUSTED_HOSTS, WORDPRESS_REST_URLS); the WordPress
   * sites' hosts are added from Postgres at each batch. */
  ownHosts: readonly string[];
  /** Checks in flight at once in one worker (each still waits for its host's gate). */
  concurrency: number;
}

export interface DestinationCheckDeps {
  sql: Sql;
  logger: Logger;
  settings: DestinationCheckSettings;
  checker: DestinationCheckerDeps;
  /** The newsroom's own hosts as last read; the gate's rate follows it. */
  ownHosts: Set<string>;
  /** The clock (tests of the two-check rule pass their own). */
  now?: () => Date;
  /** Counts a check by outcome (`lifeline_destination_checks_total`). */
  countCheck?: (outcome: DestinationOutcome | 'skipped') => void;
}

/** The checker's User-Agent: who we are and where a site owner finds us. */
export function getCheckerUserAgent(contactUrl: string): string {
  return `LifelineLinkCheck/1.0 (+${contactUrl})`;
}

const hostMatches = (host: string, list: Iterable<string>) => {
  for (const entry of list) if (host === entry || host.endsWith(`.${entry}`)) return true;
  return false;
};

export function isExcludedHost(host: string, excluded: readonly string[]): boolean {
  return hostMatches(host, excluded);
}

const NS_CACHE_MS = 3_600_000;
const NS_CACHE_ENTRIES = 10_000;

/** Name servers asked once an hour per domain: a site with many links is one lookup, not one per link. */
function cachedNameServers(resolve: (domain: string) => Promise<string[]>) {
  const cache = new Map<string, { at: number; servers: Promise<string[]> }>();
  return (domain: string): Promise<string[]> => {
    const now = Date.now();
    const hit = cache.get(domain);
    if (hit && now - hit.at < NS_CACHE_MS) return hit.servers;
    if (cache.size >= NS_CACHE_ENTRIES) cache.clear();
    const servers = resolve(domain).catch(() => [] as string[]);
    cache.set(domain, { at: now, servers });
    return servers;
  };
}

export function createDestinationCheckDeps(
  config: Config,
  base: {
    sql: Sql;
    logger: Logger;
    /** Tests: a resolver that answers made-up names, name servers, a clock, a counter. */
    lookup?: OutgoingLookup;
    resolveNs?: (domain: string) => Promise<string[]>;
    now?: () => Date;
    countCheck?: DestinationCheckDeps['countCheck'];
    concurrency?: number;
  },
): DestinationCheckDeps {
  const c = config.destinationChecks;
  const ownHosts = new Set<string>();
  const configuredOwn = [
    ...config.safety.trustedHosts,
    ...Object.values(config.wordpressRestUrls).map((u) => new URL(u).hostname.toLowerCase()),
  ];
  const settings: DestinationCheckSettings = {
    intervalMs: durationMs(c.interval),
    hostRate: c.hostRate,
    ownHostRate: c.ownHostRate,
    timeoutMs: c.timeoutMs,
    excludedHosts: c.excludedHosts,
    ownHosts: configuredOwn,
    concurrency: base.concurrency ?? 64,
  };
  for (const h of configuredOwn) ownHosts.add(h);
  // Destinations may be plain http (ADR 0071); private addresses stay refused unless OUTGOING_ALLOWED_PRIVATE.
  const rule: OutgoingRule = { allowPrivate: config.outgoing.allowPrivate, plainHttp: true };
  const gate = new HostGate({
    rateFor: (host) => (hostMatches(host, ownHosts) ? settings.ownHostRate : settings.hostRate),
  });
  const resolve: OutgoingLookup =
    base.lookup ?? ((hostname, options, callback) => dns.lookup(hostname, options, callback));
  return {
    sql: base.sql,
    logger: base.logger,
    settings,
    ownHosts,
    checker: {
      rule,
      lookup: createRuleLookup(rule, resolve) as DestinationCheckerDeps['lookup'],
      gate,
      userAgent: getCheckerUserAgent(c.contactUrl ?? `${config.appBaseUrl}/`),
      timeoutMs: c.timeoutMs,
      resolveNs: cachedNameServers(base.resolveNs ?? ((domain) => dns.promises.resolveNs(domain))),
    },
    ...(base.now ? { now: base.now } : {}),
    ...(base.countCheck ? { countCheck: base.countCheck } : {}),
  };
}
