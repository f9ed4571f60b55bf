// The CDN purged when a link changes: a signed webhook, Cloudflare or CloudFront, with each one's credentials.
import { z } from 'zod';
import type { IssueSink } from '../temporal_settings.ts';
import { optionalHttpUrl, optionalString, perDomainValues } from './env_values.ts';

/** CDNs whose caches a link change purges (CDN_PURGE_PROVIDER). */
export const CDN_PURGE_PROVIDERS = ['webhook', 'cloudflare', 'cloudfront'] as const;
export type CdnPurgeProvider = (typeof CDN_PURGE_PROVIDERS)[number];

export const cdnEnv = z.object({
  CDN_PURGE_PROVIDER: optionalString.pipe(z.enum(CDN_PURGE_PROVIDERS).optional()),
  CDN_PURGE_WEBHOOK_URL: optionalHttpUrl,
  CDN_PURGE_WEBHOOK_SECRET: optionalString.pipe(
    z.string().min(16, 'must be at least 16 characters').optional(),
  ),
  CDN_PURGE_CLOUDFLARE_ZONE_ID: optionalString.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be the zone id (32 hex characters)')
      .optional(),
  ),
  CDN_PURGE_CLOUDFLARE_API_TOKEN: optionalString.pipe(
    z
      .string()
      .regex(/^[\x21-\x7e]+$/, 'must be an API token (printable characters, no spaces)')
      .optional(),
  ),
  CDN_PURGE_CLOUDFLARE_API_BASE_URL: optionalHttpUrl,
  CDN_PURGE_CLOUDFRONT_DISTRIBUTION_ID: optionalString.pipe(
    z
      .string()
      .regex(/^[A-Z0-9]{1,64}$/, 'must be a distribution id like EDFDVBD6EXAMPLE')
      .optional(),
  ),
  // Another short domain's own Cloudflare zone or CloudFront distribution (`short.domain=id`, commas); a domain
  // not named uses the default's (a zone or distribution that serves it too).
  CDN_PURGE_CLOUDFLARE_ZONE_IDS: perDomainValues(/^[A-Za-z0-9_-]{1,64}$/, 'zone_id'),
  CDN_PURGE_CLOUDFRONT_DISTRIBUTION_IDS: perDomainValues(/^[A-Z0-9]{1,64}$/, 'DISTRIBUTIONID'),
  CDN_PURGE_AWS_ACCESS_KEY_ID: optionalString,
  CDN_PURGE_AWS_SECRET_ACCESS_KEY: optionalString,
  CDN_PURGE_AWS_SESSION_TOKEN: optionalString,
  CDN_PURGE_CLOUDFRONT_API_BASE_URL: optionalHttpUrl,
});

type CdnEnv = z.infer<typeof cdnEnv>;

const REQUIRED: Record<CdnPurgeProvider, (keyof CdnEnv)[]> = {
  webhook: ['CDN_PURGE_WEBHOOK_URL', 'CDN_PURGE_WEBHOOK_SECRET'],
  cloudflare: ['CDN_PURGE_CLOUDFLARE_ZONE_ID', 'CDN_PURGE_CLOUDFLARE_API_TOKEN'],
  cloudfront: [
    'CDN_PURGE_CLOUDFRONT_DISTRIBUTION_ID',
    'CDN_PURGE_AWS_ACCESS_KEY_ID',
    'CDN_PURGE_AWS_SECRET_ACCESS_KEY',
  ],
};

export function refineCdnEnv(env: CdnEnv, ctx: IssueSink): void {
  if (env.CDN_PURGE_PROVIDER) {
    for (const name of REQUIRED[env.CDN_PURGE_PROVIDER]) {
      if (!env[name]) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `is required when CDN_PURGE_PROVIDER is ${env.CDN_PURGE_PROVIDER}`,
        });
      }
    }
  }
}

export interface CdnConfig {
  /**
   * The CDN purged when a link changes (CDN_PURGE_PROVIDER); undefined: none. Secrets never logged. `byDomain`:
   * another short domain's own zone (Cloudflare) or distribution (CloudFront), by host name.
   */
  cdn:
    | { provider: 'webhook'; url: string; secret: string }
    | {
        provider: 'cloudflare';
        zoneId: string;
        apiToken: string;
        apiBaseUrl: string | undefined;
        byDomain: ReadonlyMap<string, string>;
      }
    | {
        provider: 'cloudfront';
        distributionId: string;
        byDomain: ReadonlyMap<string, string>;
        credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
        apiBaseUrl: string | undefined;
      }
    | undefined;
}

export function cdnConfig(e: CdnEnv): CdnConfig {
  return { cdn: toCdn(e) };
}

function toCdn(e: CdnEnv): CdnConfig['cdn'] {
  switch (e.CDN_PURGE_PROVIDER) {
    case 'webhook':
      return { provider: 'webhook', url: e.CDN_PURGE_WEBHOOK_URL!, secret: e.CDN_PURGE_WEBHOOK_SECRET! };
    case 'cloudflare':
      return {
        provider: 'cloudflare',
        zoneId: e.CDN_PURGE_CLOUDFLARE_ZONE_ID!,
        apiToken: e.CDN_PURGE_CLOUDFLARE_API_TOKEN!,
        apiBaseUrl: e.CDN_PURGE_CLOUDFLARE_API_BASE_URL,
        byDomain: e.CDN_PURGE_CLOUDFLARE_ZONE_IDS ?? new Map(),
      };
    case 'cloudfront':
      return {
        provider: 'cloudfront',
        distributionId: e.CDN_PURGE_CLOUDFRONT_DISTRIBUTION_ID!,
        byDomain: e.CDN_PURGE_CLOUDFRONT_DISTRIBUTION_IDS ?? new Map(),
        credentials: {
          accessKeyId: e.CDN_PURGE_AWS_ACCESS_KEY_ID!,
          secretAccessKey: e.CDN_PURGE_AWS_SECRET_ACCESS_KEY!,
          ...(e.CDN_PURGE_AWS_SESSION_TOKEN ? { sessionToken: e.CDN_PURGE_AWS_SESSION_TOKEN } : {}),
        },
        apiBaseUrl: e.CDN_PURGE_CLOUDFRONT_API_BASE_URL,
      };
    default:
      return undefined;
  }
}
