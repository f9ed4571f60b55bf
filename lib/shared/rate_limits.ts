// Rate limits on link creation, login, reader reports and safety checks: Redis, the primary's counters, or memory.

import { createClient } from '@redis/client';
import {
  type RateLimiterAbstract,
  RateLimiterRedis,
  RateLimiterRes,
  RLWrapperTimeouts,
} from 'rate-limiter-flexible';
import { backoffDelay } from './backoff.ts';
import { BoundedMemoryLimiter } from './bounded_memory_limiter.ts';
import { getClientNetwork } from './client_ip.ts';
import type { Config } from './config.ts';
import { sha256Hex } from './crypto.ts';
import { RateLimitedError } from './errors.ts';
import { getLimiterBudgets, type LimiterName } from './limiter_budgets.ts';
import type { Logger } from './logger.ts';
import { SharedLimiter, type SharedLimiterChannel } from './shared_limiter.ts';

/** A Redis call slower than this falls back to the in-process limiter rather than delaying the request. */
const REDIS_TIMEOUT_MS = 250;
/** Likewise for a call to the primary's shared counters (web processes of one WEB_CONCURRENCY primary). */
const SHARED_TIMEOUT_MS = 250;
/** Longest e-mail address an account can have (RFC 5321); anything longer is counted against the IP only. */
export const LOGIN_ACCOUNT_MAX_LENGTH = 254;

/** Rate limits on link creation and login (never on redirects). */
export interface RateLimits {
  /**
   * Where counters live: shared across instances in Redis; shared by the web processes of one machine in their
   * primary's memory (WEB_CONCURRENCY > 1 without Redis); or in this process's memory.
   */
  backend: 'redis' | 'primary' | 'memory';
  /** Counts `points` link creations for `subject` (an API key or user); 429 when over the minute's budget. */
  consumeCreations(subject: string, points?: number): Promise<void>;
  /**
   * Counts one login attempt before the password is checked (so parallel guesses cannot slip through): first
   * for the client's network (the IP, or its /64 for IPv6), then — only if that allowed it — for the account
   * (keyed by a hash of the e-mail, so a huge e-mail costs no memory). 429 when either is over its budget. An
   * IP that is over its budget never uses up an account's: nobody can lock an account from one address.
   */
  beginLogin(account: string, ip: string): Promise<void>;
  /** A successful login gives its attempt back: only failures use up the budget. */
  endLoginSuccessfully(account: string, ip: string): Promise<void>;
  /** Counts one reader report from `ip`'s network (POST /{code}/report); 429 when over the hour's budget. */
  consumeReports(ip: string): Promise<void>;
  /** Counts one link created by a UI session from `ip`'s network, whoever is signed in; 429 when over. */
  consumeCreationsFromIp(ip: string): Promise<void>;
  /** Counts one safety check (POST /api/v1/safety/check) for `subject` (an API key); 429 when over. */
  consumeSafetyChecks(subject: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * The account key of a typed e-mail: a hash of its normalised form (64 characters whatever was typed), or null
 * when it is too long to be anyone's address.
 */
export async function getLoginAccountKey(email: string): Promise<string | null> {
  const account = email.trim().toLowerCase();
  if (account.length > LOGIN_ACCOUNT_MAX_LENGTH) return null;
  return sha256Hex(`login-account:${account}`);
}

function toRateLimited(error: unknown): never {
  if (error instanceof RateLimiterRes) throw new RateLimitedError(error.msBeforeNext / 1000);
  throw error;
}

/**
 * Builds the limiters: Redis-backed when REDIS_URL is set (counters shared by every web instance; if Redis
 * is down or slow, an in-process limiter takes over so logins and creations keep working); else, for a web
 * process of a WEB_CONCURRENCY primary, through the primary's counters (`shared`, with the same in-process
 * insurance); else in memory. Upstash REST is not supported by the limiter library, so edge deployments limit
 * per instance.
 */
export function createRateLimits(
  config: Config,
  logger: Logger,
  options: { shared?: SharedLimiterChannel } = {},
): RateLimits {
  const { createPerMinute } = config.rateLimits;
  const budgets = getLimiterBudgets(config);
  let redis: ReturnType<typeof createClient> | undefined;
  if (config.redis?.kind === 'tcp') {
    redis = createClient({
      url: config.redis.url,
      // Fail fast while disconnected instead of queueing: the insurance limiter answers meanwhile.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 1_000,
        reconnectStrategy: (retries) => backoffDelay({ attempt: retries + 1, baseMs: 100, maxMs: 5_000 }),
      },
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
  const shared = redis ? undefined : options.shared;

  function limiter(name: LimiterName): RateLimiterAbstract {
    const { points, duration } = budgets[name];
    const memory = new BoundedMemoryLimiter({ keyPrefix: name, points, duration });
    if (shared) {
      return new RLWrapperTimeouts({
        limiter: new SharedLimiter(name, shared, budgets[name]),
        timeoutMs: SHARED_TIMEOUT_MS,
        insuranceLimiter: memory,
      });
    }
    if (!redis) return memory;
    const store = new RateLimiterRedis({
      storeClient: redis,
      useRedisPackage: true,
      rejectIfRedisNotReady: true,
      keyPrefix: `${prefix}${name}`,
      points,
      duration,
      insuranceLimiter: memory,
    });
    return new RLWrapperTimeouts({ limiter: store, timeoutMs: REDIS_TIMEOUT_MS, insuranceLimiter: memory });
  }

  const creations = limiter('create');
  const loginAccount = limiter('login-account');
  const loginIp = limiter('login-ip');
  const reports = limiter('report-ip');
  const creationsByIp = limiter('create-ip');
  const safetyChecks = limiter('safety-check');

  return {
    backend: redis ? 'redis' : shared ? 'primary' : 'memory',
    async consumeCreations(subject, points = 1) {
      // A batch larger than the whole budget may still run once per window rather than never.
      await creations.consume(subject, Math.min(points, createPerMinute)).catch(toRateLimited);
    },
    async beginLogin(account, ip) {
      await loginIp.consume(getClientNetwork(ip)).catch(toRateLimited);
      const key = await getLoginAccountKey(account);
      if (key !== null) await loginAccount.consume(key).catch(toRateLimited);
    },
    async endLoginSuccessfully(account, ip) {
      const key = await getLoginAccountKey(account);
      await Promise.allSettled([
        ...(key === null ? [] : [loginAccount.delete(key)]),
        loginIp.reward(getClientNetwork(ip), 1),
      ]);
    },
    async consumeReports(ip) {
      await reports.consume(getClientNetwork(ip)).catch(toRateLimited);
    },
    async consumeCreationsFromIp(ip) {
      await creationsByIp.consume(getClientNetwork(ip)).catch(toRateLimited);
    },
    async consumeSafetyChecks(subject) {
      await safetyChecks.consume(subject).catch(toRateLimited);
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
