import type { Config } from '../shared/config.ts';
import { DEFAULT_DOMAIN, shortBaseUrlOf } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import type { CdnPurger } from './cdn_purger.ts';
import { createCdnPurger } from './create_cdn_purger.ts';

type PurgerConfig = Pick<Config, 'cdn' | 'shortBaseUrl' | 'outgoing'> & Partial<Pick<Config, 'shortDomains'>>;

/**
 * The purger CDN_PURGE_PROVIDER names (with its settings) for one short domain (its stored name; default: the
 * default domain), or undefined when none is configured. A purger builds each URL on its domain's own base
 * (`https://b.example/x7`); Cloudflare purges in the domain's zone and CloudFront in its distribution
 * (CDN_PURGE_CLOUDFLARE_ZONE_IDS, CDN_PURGE_CLOUDFRONT_DISTRIBUTION_IDS), the default's when the domain has none.
 */
export function createConfiguredCdnPurger(
  config: PurgerConfig,
  options: { logger?: Logger; fetch?: typeof fetch; domain?: string } = {},
): CdnPurger | undefined {
  const cdn = config.cdn;
  if (!cdn) return undefined;
  const domain = options.domain ?? DEFAULT_DOMAIN;
  const shortBaseUrl = shortBaseUrlOf(config, domain);
  const common = {
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  switch (cdn.provider) {
    case 'webhook':
      return createCdnPurger({
        provider: 'webhook',
        url: cdn.url,
        secret: cdn.secret,
        shortBaseUrl,
        outgoing: config.outgoing,
        ...common,
      });
    case 'cloudflare':
      return createCdnPurger({
        provider: 'cloudflare',
        zoneId: cdn.byDomain.get(domain) ?? cdn.zoneId,
        apiToken: cdn.apiToken,
        shortBaseUrl,
        ...(cdn.apiBaseUrl ? { apiBaseUrl: cdn.apiBaseUrl } : {}),
        ...common,
      });
    case 'cloudfront':
      return createCdnPurger({
        provider: 'cloudfront',
        distributionId: cdn.byDomain.get(domain) ?? cdn.distributionId,
        credentials: cdn.credentials,
        ...(cdn.apiBaseUrl ? { apiBaseUrl: cdn.apiBaseUrl } : {}),
        ...common,
      });
  }
}

/** One purger per short domain after the first (SHORT_DOMAINS), by stored name; empty without a CDN. */
export function createConfiguredDomainCdnPurgers(
  config: PurgerConfig,
  options: { logger?: Logger; fetch?: typeof fetch } = {},
): Map<string, CdnPurger> {
  const purgers = new Map<string, CdnPurger>();
  for (const domain of config.shortDomains?.slice(1) ?? []) {
    const purger = createConfiguredCdnPurger(config, { ...options, domain });
    if (purger) purgers.set(domain, purger);
  }
  return purgers;
}
