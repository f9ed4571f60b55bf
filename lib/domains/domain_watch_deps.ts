// What the domain watch's reads need, built from configuration (workers/worker_deps.ts) or by tests.
import { createSafeBrowsing, type SafeBrowsing } from '../safety/safe_browsing.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { createOutgoingFetch, type OutgoingLookup, type OutgoingRule } from '../shared/outgoing_request.ts';
import { createRdapClient, type RdapClient } from './rdap_client.ts';

export interface DomainWatchDeps {
  rdap: RdapClient;
  tls: { port: number; rule: OutgoingRule; lookup?: OutgoingLookup; ca?: string[]; timeoutMs?: number };
  /** Safe Browsing, when SAFE_BROWSING_API_KEY is set: the reputation of our own hosts. */
  safeBrowsing?: SafeBrowsing;
  now?: () => number;
}

/** Test overrides: a resolver for made-up names and the roots a test's certificates chain to. */
export interface DomainWatchOverrides {
  lookup?: OutgoingLookup;
  ca?: string[];
  timeoutMs?: number;
  now?: () => number;
}

export function createDomainWatchDeps(
  config: Pick<Config, 'domainWatch' | 'outgoing' | 'safeBrowsing'>,
  logger: Logger,
  overrides: DomainWatchOverrides = {},
): DomainWatchDeps {
  const outgoingFetch = createOutgoingFetch(
    config.outgoing,
    overrides.lookup ? { lookup: overrides.lookup } : {},
  );
  const safeBrowsing = config.safeBrowsing
    ? createSafeBrowsing({
        apiKey: config.safeBrowsing.apiKey,
        apiBaseUrl: config.safeBrowsing.apiBaseUrl,
        onError: (e) =>
          logger.warn(
            { status: e.status, detail: e.message, backoffMs: Math.round(e.backoffMs) },
            'Safe Browsing lookup of our own hosts failed; backing off',
          ),
      })
    : undefined;
  return {
    rdap: createRdapClient({
      rdapUrl: config.domainWatch.rdapUrl,
      bootstrapUrl: config.domainWatch.rdapBootstrapUrl,
      fetch: outgoingFetch,
      ...(overrides.now ? { now: overrides.now } : {}),
    }),
    tls: {
      port: config.domainWatch.tlsPort,
      rule: config.outgoing,
      ...(overrides.lookup ? { lookup: overrides.lookup } : {}),
      ...(overrides.ca ? { ca: overrides.ca } : {}),
      ...(overrides.timeoutMs ? { timeoutMs: overrides.timeoutMs } : {}),
    },
    ...(safeBrowsing ? { safeBrowsing } : {}),
    ...(overrides.now ? { now: overrides.now } : {}),
  };
}
