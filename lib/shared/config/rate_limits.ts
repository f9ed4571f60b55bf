// How often one key, account, session or client IP may act, and which proxy header names the client IP.
import { z } from 'zod';
import { optionalString } from './env_values.ts';

export const rateLimitsEnv = z.object({
  RATE_LIMIT_CREATE_PER_MINUTE: z.coerce.number().int().min(1).default(2000),
  RATE_LIMIT_LOGIN_PER_ACCOUNT: z.coerce.number().int().min(1).default(10),
  RATE_LIMIT_LOGIN_PER_IP: z.coerce.number().int().min(1).default(50),
  RATE_LIMIT_REPORTS_PER_HOUR: z.coerce.number().int().min(1).default(20),
  RATE_LIMIT_CREATE_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  RATE_LIMIT_SAFETY_CHECKS_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  TRUSTED_CLIENT_IP_HEADER: optionalString.transform((v) => v?.toLowerCase()),
});

export interface RateLimitsConfig {
  /** CDN/proxy header carrying the client IP (login rate limits); unset: the socket address. */
  trustedClientIpHeader: string | undefined;
  /** Links created per minute per API key or user; failed logins per 15 minutes per account and per IP. */
  rateLimits: {
    createPerMinute: number;
    loginPerAccount: number;
    loginPerIp: number;
    /** Reader reports (POST /{code}/report) per client IP per hour. */
    reportsPerHour: number;
    /** Links created per minute from one client IP by UI sessions, whoever is signed in. */
    createPerIpPerMinute: number;
    /** POST /api/v1/safety/check calls per minute per API key (each may spend Safe Browsing quota). */
    safetyChecksPerMinute: number;
  };
}

export function rateLimitsConfig(e: z.infer<typeof rateLimitsEnv>): RateLimitsConfig {
  return {
    trustedClientIpHeader: e.TRUSTED_CLIENT_IP_HEADER,
    rateLimits: {
      createPerMinute: e.RATE_LIMIT_CREATE_PER_MINUTE,
      loginPerAccount: e.RATE_LIMIT_LOGIN_PER_ACCOUNT,
      loginPerIp: e.RATE_LIMIT_LOGIN_PER_IP,
      reportsPerHour: e.RATE_LIMIT_REPORTS_PER_HOUR,
      createPerIpPerMinute: e.RATE_LIMIT_CREATE_PER_IP_PER_MINUTE,
      safetyChecksPerMinute: e.RATE_LIMIT_SAFETY_CHECKS_PER_MINUTE,
    },
  };
}
