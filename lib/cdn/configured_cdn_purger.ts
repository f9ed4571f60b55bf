import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import type { CdnPurger } from './cdn_purger.ts';
import { createCdnPurger } from './create_cdn_purger.ts';

/** The purger CDN_PURGE_PROVIDER names (with its settings), or undefined when none is configured. */
export function createConfiguredCdnPurger(
  config: Pick<Config, 'cdn' | 'shortBaseUrl' | 'outgoing'>,
  options: { logger?: Logger; fetch?: typeof fetch } = {},
): CdnPurger | undefined {
  const cdn = config.cdn;
  if (!cdn) return undefined;
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
        shortBaseUrl: config.shortBaseUrl,
        outgoing: config.outgoing,
        ...common,
      });
    case 'cloudflare':
      return createCdnPurger({
        provider: 'cloudflare',
        zoneId: cdn.zoneId,
        apiToken: cdn.apiToken,
        shortBaseUrl: config.shortBaseUrl,
        ...(cdn.apiBaseUrl ? { apiBaseUrl: cdn.apiBaseUrl } : {}),
        ...common,
      });
    case 'cloudfront':
      return createCdnPurger({
        provider: 'cloudfront',
        distributionId: cdn.distributionId,
        credentials: cdn.credentials,
        ...(cdn.apiBaseUrl ? { apiBaseUrl: cdn.apiBaseUrl } : {}),
        ...common,
      });
  }
}
