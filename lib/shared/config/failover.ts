// Reconciliation's schedule and the failover between fronts: the DNS adapter and the short domain's TTLs.
import { z } from 'zod';
import type { IssueSink } from '../temporal_settings.ts';
import { duration, optionalHttpUrl, optionalString } from './env_values.ts';

export const failoverEnv = z.object({
  RECONCILE_INTERVAL: duration.default('1d'),
  DNS_ADAPTER_URL: optionalHttpUrl,
  DNS_ADAPTER_TOKEN: optionalString,
  FAILOVER_DNS_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60, 'must be at least 60 (DNS providers and resolvers ignore or refuse shorter TTLs)')
    .max(86_400)
    .default(300),
  // The DNS TTL a planned switch lowers to first.
  FAILOVER_DNS_LOWERED_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60, 'must be at least 60 (DNS providers and resolvers ignore or refuse shorter TTLs)')
    .max(3_600)
    .default(60),
});

type FailoverEnv = z.infer<typeof failoverEnv>;

export function refineFailoverEnv(env: FailoverEnv, ctx: IssueSink): void {
  if (env.FAILOVER_DNS_LOWERED_TTL_SECONDS >= env.FAILOVER_DNS_TTL_SECONDS) {
    ctx.addIssue({
      code: 'custom',
      path: ['FAILOVER_DNS_LOWERED_TTL_SECONDS'],
      message: `must be below FAILOVER_DNS_TTL_SECONDS (${env.FAILOVER_DNS_TTL_SECONDS})`,
    });
  }
}

export interface FailoverConfig {
  /** Reconciliation schedule and vendor failover: the optional DNS adapter and the short domain's DNS TTL. */
  lifecycle: {
    reconcileInterval: string;
    dnsAdapter: { url: string; token: string | undefined } | undefined;
    dnsTtlSeconds: number;
    /** The TTL a planned switch lowers the short domain to before switching (FAILOVER_DNS_LOWERED_TTL_SECONDS). */
    dnsLoweredTtlSeconds: number;
  };
}

export function failoverConfig(e: FailoverEnv): FailoverConfig {
  return {
    lifecycle: {
      reconcileInterval: e.RECONCILE_INTERVAL,
      dnsAdapter: e.DNS_ADAPTER_URL ? { url: e.DNS_ADAPTER_URL, token: e.DNS_ADAPTER_TOKEN } : undefined,
      dnsTtlSeconds: e.FAILOVER_DNS_TTL_SECONDS,
      dnsLoweredTtlSeconds: e.FAILOVER_DNS_LOWERED_TTL_SECONDS,
    },
  };
}
