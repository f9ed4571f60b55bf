import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  RLWrapperTimeouts,
} from 'rate-limiter-flexible';
import { createClient } from 'redis';
import type { Config } from './config.ts';
import { RateLimitedError } from './errors.ts';
import type { Logger } from './logger.ts';

/** Window of the creation limit. */
export const CREATE_WINDOW_SECONDS = 60;
/** Window of the login limits (failed attempts per account and per IP). */
export const LOGIN_WINDOW_SECONDS = 15 * 60;
/** Window of the reader-report limit (POST /{code}/report, per client IP). */
export const REPORT_WINDOW_SECONDS = 60 * 60;
/** A Redis call slower than this falls back to the in-process limiter rather than delaying the request. */
const REDIS_TIMEOUT_MS = 250;

/** Rate limits on link creation and login (never on redirects). */
export interface RateLimits {
  /** Where counters live: shared across instances in Redis, or per process in memory. */
  backend: 'redis' | 'memory';
  /** Counts `points` link creations for `subject` (an API key or user); 429 when over the minute's budget. */
  consumeCreations(subject: string, points?: number): Promise<void>;
  /**
   * Counts one login attempt for the account and the client IP before the password is checked (so
   * parallel guesses cannot slip through); 429 when either is over its budget.
   */
  beginLogin(account: string, ip: string): Promise<void>;
  /** A successful login gives its attempt back: only failures use up the budget. */
  endLoginSuccessfully(account: string, ip: string): Promise<void>;
  /** Counts one reader report from `ip` (POST /{code}/report); 429 when over the hour's budget. */
  consumeReports(ip: string): Promise<void>;
  close(): Promise<void>;
}

function toRateLimited(error: unknown): never {
  if (error instanceof RateLimiterRes) throw new RateLimitedError(error.msBeforeNext / 1000);
  throw error;
}

/**
 * Builds the limiters: Redis-backed when REDIS_URL is set (counters shared by every web instance; if Redis
 * is down or slow, an in-process limiter takes over so logins and creations keep working), else in memory.
 * Upstash REST is not supported by the limiter library, so edge deployments limit per instance.
 */
export function createRateLimits(config: Config, logger: Logger): RateLimits {
  const { createPerMinute, loginPerAccount, loginPerIp, reportsPerHour } = config.rateLimits;
  let redis: ReturnType<typeof createClient> | undefined;
  if (config.redis?.kind === 'tcp') {
    redis = createClient({
      url: config.redis.url,
      // Fail fast while disconnected instead of queueing: the insurance limiter answers meanwhile.
      disableOfflineQueue: true,
      socket: { connectTimeout: 1_000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 5_000) },
    });
    let lastLogged = 0;
    redis.on('error', (err) => {
      if (Date.now() - lastLogged < 30_000) return;
      lastLogged = Date.now();
      logger.warn({ err }, 'rate limiter: Redis unavailable; limiting per instance until it is back');
    });
    redis.connect().catch(() => {});
  } else if (config.redis?.kind === 'upstash') {
    logger.info('rate limiter: Upstash REST is not supported; limits are per instance');
  }
  const prefix = `${config.redis?.keyPrefix ?? 'lifeline:'}rl:`;

  function limiter(name: string, points: number, duration: number): RateLimiterAbstract {
    const memory = new RateLimiterMemory({ keyPrefix: name, points, duration });
    if (!redis) return memory;
    const shared = new RateLimiterRedis({
      storeClient: redis,
      useRedisPackage: true,
      rejectIfRedisNotReady: true,
      keyPrefix: `${prefix}${name}`,
      points,
      duration,
      insuranceLimiter: memory,
    });
    return new RLWrapperTimeouts({ limiter: shared, timeoutMs: REDIS_TIMEOUT_MS, insuranceLimiter: memory });
  }

  const creations = limiter('create', createPerMinute, CREATE_WINDOW_SECONDS);
  const loginAccount = limiter('login-account', loginPerAccount, LOGIN_WINDOW_SECONDS);
  const loginIp = limiter('login-ip', loginPerIp, LOGIN_WINDOW_SECONDS);
  const reports = limiter('report-ip', reportsPerHour, REPORT_WINDOW_SECONDS);

  return {
    backend: redis ? 'redis' : 'memory',
    async consumeCreations(subject, points = 1) {
      // A batch larger than the whole budget may still run once per window rather than never.
      await creations.consume(subject, Math.min(points, createPerMinute)).catch(toRateLimited);
    },
    async beginLogin(account, ip) {
      const results = await Promise.allSettled([
        loginAccount.consume(account.toLowerCase()),
        loginIp.consume(ip),
      ]);
      const rejected = results.filter((r) => r.status === 'rejected').map((r) => r.reason);
      const limited = rejected.filter((r): r is RateLimiterRes => r instanceof RateLimiterRes);
      if (limited.length > 0) {
        throw new RateLimitedError(Math.max(...limited.map((r) => r.msBeforeNext)) / 1000);
      }
      if (rejected.length > 0) throw rejected[0];
    },
    async endLoginSuccessfully(account, ip) {
      await Promise.allSettled([loginAccount.delete(account.toLowerCase()), loginIp.reward(ip, 1)]);
    },
    async consumeReports(ip) {
      await reports.consume(ip).catch(toRateLimited);
    },
    async close() {
      try {
        redis?.destroy();
      } catch {
        // already closed
      }
    },
  };
}
