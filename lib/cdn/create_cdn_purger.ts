import type { CdnPurger } from './cdn_purger.ts';
import { type CloudflarePurgerOptions, createCloudflarePurger } from './cloudflare_purger.ts';
import { type CloudFrontPurgerOptions, createCloudFrontPurger } from './cloudfront_purger.ts';
import { createWebhookPurger, type WebhookPurgerOptions } from './webhook_purger.ts';

/** Which purger a deployment uses and its settings (one `CDN_PURGE_PROVIDER` value each). */
export type CdnPurgerConfig =
  | ({ provider: 'webhook' } & WebhookPurgerOptions)
  | ({ provider: 'cloudflare' } & CloudflarePurgerOptions)
  | ({ provider: 'cloudfront' } & CloudFrontPurgerOptions);

/** The purger for a configuration; throws a clear error for a bad one (at startup, never during a purge). */
export function createCdnPurger(config: CdnPurgerConfig): CdnPurger {
  switch (config.provider) {
    case 'webhook':
      return createWebhookPurger(config);
    case 'cloudflare':
      return createCloudflarePurger(config);
    case 'cloudfront':
      return createCloudFrontPurger(config);
  }
}
