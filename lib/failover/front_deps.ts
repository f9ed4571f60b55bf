import type { RedirectSettings } from '../redirect/redirect_policy.ts';
import type { Config } from '../shared/config.ts';
import { createWebhookDnsAdapter, type DnsAdapter } from './dns_adapter.ts';

/** What failover activities need (ActivityDeps.front). */
export interface FrontDeps {
  /** The public short base: where readers' requests land, whichever front DNS points at. */
  shortBaseUrl: string;
  /** SHORT_DOMAINS (the default first): another domain's public base is shortBaseUrlOf its name. */
  shortDomains?: readonly string[];
  redirect: RedirectSettings;
  /** Absent: a failover waits for the operator's `dnsChanged` signal. */
  dnsAdapter: DnsAdapter | undefined;
  /** The short domain's DNS TTL: how long a real failover waits for resolvers to follow (drill estimate). */
  dnsTtlSeconds: number;
}

/** Builds the failover dependencies from configuration. */
export function createFrontDeps(config: Config, overrides: { dnsAdapter?: DnsAdapter } = {}): FrontDeps {
  const adapter = config.lifecycle.dnsAdapter;
  return {
    shortBaseUrl: config.shortBaseUrl,
    shortDomains: config.shortDomains,
    redirect: config.redirect,
    dnsAdapter:
      overrides.dnsAdapter ??
      (adapter
        ? createWebhookDnsAdapter({ url: adapter.url, token: adapter.token, outgoing: config.outgoing })
        : undefined),
    dnsTtlSeconds: config.lifecycle.dnsTtlSeconds,
  };
}
