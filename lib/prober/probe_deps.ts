import type { RedirectSettings } from '../redirect/redirect_policy.ts';
import type { Config } from '../shared/config.ts';
import { DEFAULT_DOMAIN, domainNameOf, shortBaseUrlOf, storedShortDomains } from '../shared/link_key.ts';
import { createProbeMetrics, type ProbeMetrics, type Registry } from '../shared/metrics.ts';

/** What the prober needs (ActivityDeps.probe), from configuration. */
export interface ProbeDeps {
  /** Where readers' requests land (PROBE_BASE_URL, else the public short base URL): whichever front answers. */
  baseUrl: string;
  /**
   * Every short domain probed, the default ('') first: its stored name, its host name (the metrics' and logs'
   * `domain`) and where it is asked (the default's: baseUrl; another's: PROBE_BASE_URLS, else its public base).
   */
  domains: { stored: string; name: string; baseUrl: string }[];
  /** Codes of the rotating sample per probe (PROBE_SAMPLE). */
  sample: number;
  timeoutMs: number;
  /** How this deployment answers (the expected answer is decided by the same pure policy). */
  redirect: RedirectSettings;
  /**
   * A link younger than this (its last change) is left out of the sample: every cache answers a change within
   * RESOLVER_CACHE_TTL_MS, so until then an old answer is by design, not a fault.
   */
  settleMs: number;
  /** The canary's destination (PROBE_CANARY_URL, else ROOT_REDIRECT_URL); undefined: no canary. */
  canaryUrl: string | undefined;
  metrics: ProbeMetrics;
}

/** Builds the prober's dependencies; its metrics go to `registry` (the worker's /metrics; absent: their own). */
export function createProbeDeps(config: Config, registry?: Registry): ProbeDeps {
  const baseUrl = config.probe.baseUrl ?? config.shortBaseUrl;
  const domains = storedShortDomains(config).map((stored) => ({
    stored,
    name: domainNameOf(config, stored),
    baseUrl:
      stored === DEFAULT_DOMAIN
        ? baseUrl
        : (config.probe.baseUrls.get(stored) ?? shortBaseUrlOf(config, stored)),
  }));
  return {
    baseUrl,
    domains,
    sample: config.probe.sample,
    timeoutMs: config.probe.timeoutMs,
    redirect: config.redirect,
    settleMs: config.resolver.cacheTtlMs + 60_000,
    canaryUrl: config.probe.canaryUrl ?? config.rootRedirectUrl,
    metrics: createProbeMetrics(
      registry,
      domains.map((d) => d.name),
    ),
  };
}
