// The process's one environment schema, composed from a part per capability (lib/shared/config/), and the
// parsed configuration it yields: parsed once at start-up and passed down.
import { z } from 'zod';
import {
  type AnalyticsConfig,
  analyticsConfig,
  analyticsEnv,
  refineAnalyticsEnv,
} from './config/analytics.ts';
import { type ArchiveConfig, archiveConfig, archiveEnv, refineArchiveEnv } from './config/archive.ts';
import { type AuthConfig, authConfig, authEnv, refineAuthEnv } from './config/auth.ts';
import { type BitlyConfig, bitlyConfig, bitlyEnv, refineBitlyEnv } from './config/bitly.ts';
import { type CdnConfig, cdnConfig, cdnEnv, refineCdnEnv } from './config/cdn.ts';
import { type DatabaseConfig, databaseConfig, databaseEnv } from './config/database.ts';
import { type DestinationsConfig, destinationsConfig, destinationsEnv } from './config/destinations.ts';
import { type DomainWatchConfig, domainWatchConfig, domainWatchEnv } from './config/domain_watch.ts';
import { type EscrowConfig, escrowConfig, escrowEnv, refineEscrowEnv } from './config/escrow.ts';
import { type FailoverConfig, failoverConfig, failoverEnv, refineFailoverEnv } from './config/failover.ts';
import { type IdentityConfig, identityConfig, identityEnv, refineIdentityEnv } from './config/identity.ts';
import { type LinksConfig, linksConfig, linksEnv } from './config/links.ts';
import { type ProberConfig, proberConfig, proberEnv } from './config/prober.ts';
import { type RateLimitsConfig, rateLimitsConfig, rateLimitsEnv } from './config/rate_limits.ts';
import { type RedirectConfig, redirectConfig, redirectEnv } from './config/redirect.ts';
import { type RedisConfig, redisConfig, redisEnv, refineRedisEnv } from './config/redis.ts';
import { type SafetyConfig, safetyConfig, safetyEnv } from './config/safety.ts';
import { refineServerEnv, type ServerConfig, serverConfig, serverEnv } from './config/server.ts';
import { refineTemporalEnv, type TemporalConfig, temporalConfig, temporalEnv } from './config/temporal.ts';
import { type TracingConfig, tracingConfig, tracingEnv } from './config/tracing.ts';
import { type WebhooksConfig, webhooksConfig, webhooksEnv } from './config/webhooks.ts';
import { type WordpressConfig, wordpressConfig, wordpressEnv } from './config/wordpress.ts';

export { CDN_PURGE_PROVIDERS, type CdnPurgeProvider } from './config/cdn.ts';
export { isHttpsOrLoopback } from './config/env_values.ts';
export { SNAPSHOT_FORMATS, type SnapshotFormat } from './config/escrow.ts';
export { CODE_ALPHABET } from './config/links.ts';
export type { RedirectStatus } from './config/redirect.ts';

/** One schema over every environment name in docs/CONFIGURATION.md; each rule across variables stays in its part. */
export const envSchema = z
  .object({
    ...serverEnv.shape,
    ...databaseEnv.shape,
    ...redisEnv.shape,
    ...redirectEnv.shape,
    ...temporalEnv.shape,
    ...bitlyEnv.shape,
    ...safetyEnv.shape,
    ...failoverEnv.shape,
    ...wordpressEnv.shape,
    ...authEnv.shape,
    ...identityEnv.shape,
    ...rateLimitsEnv.shape,
    ...linksEnv.shape,
    ...analyticsEnv.shape,
    ...escrowEnv.shape,
    ...cdnEnv.shape,
    ...domainWatchEnv.shape,
    ...proberEnv.shape,
    ...archiveEnv.shape,
    ...destinationsEnv.shape,
    ...tracingEnv.shape,
    ...webhooksEnv.shape,
  })
  .superRefine((env, ctx) => {
    refineServerEnv(env, ctx);
    // A Bitly mapping names a short domain after the first (the first is BITLY_DOMAIN's; ADR 0078).
    const others = new Set(env.SHORT_DOMAINS.slice(1));
    for (const m of env.BITLY_DOMAINS ?? []) {
      if (!others.has(m.shortDomain)) {
        ctx.addIssue({
          code: 'custom',
          path: ['BITLY_DOMAINS'],
          message: `${m.shortDomain} is not one of SHORT_DOMAINS after the first (the first uses BITLY_DOMAIN)`,
        });
      }
    }
    for (const name of [
      'CDN_PURGE_CLOUDFLARE_ZONE_IDS',
      'CDN_PURGE_CLOUDFRONT_DISTRIBUTION_IDS',
      'PROBE_BASE_URLS',
    ] as const) {
      for (const domain of env[name]?.keys() ?? []) {
        if (!others.has(domain)) {
          ctx.addIssue({
            code: 'custom',
            path: [name],
            message: `${domain} is not one of SHORT_DOMAINS after the first (the first has its own setting)`,
          });
        }
      }
    }
    refineTemporalEnv(env, ctx);
    refineRedisEnv(env, ctx);
    refineBitlyEnv(env, ctx);
    refineAnalyticsEnv(env, ctx);
    refineAuthEnv(env, ctx);
    refineIdentityEnv(env, ctx);
    refineFailoverEnv(env, ctx);
    refineEscrowEnv(env, ctx);
    refineCdnEnv(env, ctx);
    refineArchiveEnv(env, ctx);
  });

export type Env = z.infer<typeof envSchema>;

/** The parsed configuration every part of the product receives. */
export interface Config
  extends ServerConfig,
    DatabaseConfig,
    RedisConfig,
    RedirectConfig,
    TemporalConfig,
    BitlyConfig,
    SafetyConfig,
    FailoverConfig,
    WordpressConfig,
    AuthConfig,
    IdentityConfig,
    RateLimitsConfig,
    LinksConfig,
    AnalyticsConfig,
    EscrowConfig,
    CdnConfig,
    DomainWatchConfig,
    ProberConfig,
    ArchiveConfig,
    DestinationsConfig,
    TracingConfig,
    WebhooksConfig {}

/** A configuration error names every offending variable; start-up stops on it. */
export class ConfigError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(
      `Invalid configuration:\n${problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}\n` +
        'Fix the environment variable(s) above and start again.',
    );
    this.name = 'ConfigError';
  }
}

/** Parses the environment once; throws ConfigError naming each bad variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => ({
        variable: String(i.path[0] ?? '(environment)'),
        message: i.message,
      })),
    );
  }
  const e = parsed.data;
  return {
    ...serverConfig(e),
    ...databaseConfig(e),
    ...redisConfig(e),
    ...redirectConfig(e),
    ...temporalConfig(e),
    ...bitlyConfig(e),
    ...safetyConfig(e),
    ...failoverConfig(e),
    ...wordpressConfig(e),
    ...authConfig(e),
    ...identityConfig(e),
    ...rateLimitsConfig(e),
    ...linksConfig(e),
    ...analyticsConfig(e),
    ...escrowConfig(e),
    ...cdnConfig(e),
    ...domainWatchConfig(e),
    ...proberConfig(e),
    ...archiveConfig(e),
    ...destinationsConfig(e),
    ...tracingConfig(e),
    ...webhooksConfig(e),
  };
}
