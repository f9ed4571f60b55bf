// The rate limiters by name, each with its budget (from the configuration) and its window.
import type { Config } from './config.ts';

/** Window of the creation limit. */
export const CREATE_WINDOW_SECONDS = 60;
/** Window of the login limits (failed attempts per account and per IP). */
export const LOGIN_WINDOW_SECONDS = 15 * 60;
/** Window of the reader-report limit (POST /{code}/report, per client IP). */
export const REPORT_WINDOW_SECONDS = 60 * 60;
/** Window of the safety-check limit (POST /api/v1/safety/check, per API key). */
export const SAFETY_CHECK_WINDOW_SECONDS = 60;
export const LIMITER_NAMES = [
  'create',
  'login-account',
  'login-ip',
  'report-ip',
  'create-ip',
  'safety-check',
] as const;
export type LimiterName = (typeof LIMITER_NAMES)[number];

/** The limiters, by the name their keys carry, with their budgets and windows from the configuration. */
export function getLimiterBudgets(config: Config): Record<LimiterName, { points: number; duration: number }> {
  const r = config.rateLimits;
  return {
    create: { points: r.createPerMinute, duration: CREATE_WINDOW_SECONDS },
    'login-account': { points: r.loginPerAccount, duration: LOGIN_WINDOW_SECONDS },
    'login-ip': { points: r.loginPerIp, duration: LOGIN_WINDOW_SECONDS },
    'report-ip': { points: r.reportsPerHour, duration: REPORT_WINDOW_SECONDS },
    'create-ip': { points: r.createPerIpPerMinute, duration: CREATE_WINDOW_SECONDS },
    'safety-check': { points: r.safetyChecksPerMinute, duration: SAFETY_CHECK_WINDOW_SECONDS },
  };
}
