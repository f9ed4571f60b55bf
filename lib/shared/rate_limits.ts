import { LRUCache } from 'lru-cache';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  RLWrapperTimeouts,
} from 'rate-limiter-flexible';
import { createClient } from 'redis';
import { backoffDelay } from './backoff.ts';
import { getClientNetwork } from './client_ip.ts';
import type { Config } from './config.ts';
import { sha256Hex } from './crypto.ts';
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
/** Likewise for a call to the primary's shared counters (web processes of one WEB_CONCURRENCY primary). */
const SHARED_TIMEOUT_MS = 250;
/** Window of the safety-check limit (POST /api/v1/safety/check, per API key). */
export const SAFETY_CHECK_WINDOW_SECONDS = 60;
/**
 * Keys one in-process limiter tracks at most (least recently used beyond it are forgotten): a flood of distinct
 * e-mails or addresses costs bounded memory (~200 bytes a key), never the process.
 */
export const LIMITER_KEYS_MAX = 100_000;
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

// The library's base class (key prefixes, points, duration; what its Redis limiter accepts as insurance). Its
// typings declare it but the package does not export it at run time: reach it through a subclass it exports.
const LimiterBase = Object.getPrototypeOf(RateLimiterMemory) as typeof RateLimiterAbstract;

/**
 * A fixed-window limiter in process memory with a bounded number of keys (LIMITER_KEYS_MAX, least recently
 * used forgotten first): rate-limiter-flexible's memory limiter keeps every key (and a timer for each) until
 * its window ends, so distinct keys sent fast enough grow the heap without bound. Also the Redis limiters'
 * insurance while Redis is unreachable.
 */
export class BoundedMemoryLimiter extends LimiterBase {
  private readonly windows: LRUCache<string, { consumed: number; resetAt: number }>;

  constructor(options: { keyPrefix: string; points: number; duration: number; maxKeys?: number }) {
    super({ keyPrefix: options.keyPrefix, points: options.points, duration: options.duration });
    // Bounded by maxSize at one unit a key rather than by `max`: with `max`, lru-cache allocates its arrays for
    // every key up front (~2.8 MB a limiter at 100,000 keys, six limiters a web process); this way they grow
    // with the keys actually seen, up to the same bound.
    this.windows = new LRUCache({ maxSize: options.maxKeys ?? LIMITER_KEYS_MAX, sizeCalculation: () => 1 });
  }

  /** Keys tracked now (for tests and memory accounting). */
  get size(): number {
    return this.windows.size;
  }

  private add(key: string, points: number): RateLimiterRes {
    const now = Date.now();
    const rlKey = this.getKey(key);
    let window = this.windows.get(rlKey);
    if (window === undefined || window.resetAt <= now) {
      window = { consumed: 0, resetAt: now + this.duration * 1000 };
      this.windows.set(rlKey, window);
    }
    const first = window.consumed === 0;
    window.consumed = Math.max(0, window.consumed + points);
    return new RateLimiterRes(
      Math.max(this.points - window.consumed, 0),
      window.resetAt - now,
      window.consumed,
      first,
    );
  }

  override consume(key: string | number, points = 1): Promise<RateLimiterRes> {
    const res = this.add(String(key), points);
    return res.consumedPoints > this.points ? Promise.reject(res) : Promise.resolve(res);
  }

  override penalty(key: string | number, points = 1): Promise<RateLimiterRes> {
    return Promise.resolve(this.add(String(key), points));
  }

  override reward(key: string | number, points = 1): Promise<RateLimiterRes> {
    return Promise.resolve(this.add(String(key), -points));
  }

  override block(key: string | number, secDuration: number): Promise<RateLimiterRes> {
    const resetAt = Date.now() + secDuration * 1000;
    this.windows.set(this.getKey(String(key)), { consumed: this.points + 1, resetAt });
    return Promise.resolve(new RateLimiterRes(0, secDuration * 1000, this.points + 1));
  }

  override set(key: string | number, points: number, secDuration: number): Promise<RateLimiterRes> {
    const resetAt = Date.now() + (secDuration > 0 ? secDuration : this.duration) * 1000;
    this.windows.set(this.getKey(String(key)), { consumed: points, resetAt });
    return Promise.resolve(
      new RateLimiterRes(Math.max(this.points - points, 0), resetAt - Date.now(), points),
    );
  }

  override get(key: string | number): Promise<RateLimiterRes | null> {
    const window = this.windows.get(this.getKey(String(key)));
    if (window === undefined || window.resetAt <= Date.now()) return Promise.resolve(null);
    return Promise.resolve(
      new RateLimiterRes(
        Math.max(this.points - window.consumed, 0),
        window.resetAt - Date.now(),
        window.consumed,
      ),
    );
  }

  override delete(key: string | number): Promise<boolean> {
    return Promise.resolve(this.windows.delete(this.getKey(String(key))));
  }
}

/** One operation on a shared counter, as a web process asks its primary (server/web_cluster.ts relays it). */
export interface SharedLimiterRequest {
  /** Which limiter (LIMITER_NAMES). */
  limiter: LimiterName;
  op: 'consume' | 'penalty' | 'reward' | 'delete' | 'get';
  key: string;
  points: number;
}

/** The answer: the counter's state after the operation (null: no window), and whether a consume went over. */
export interface SharedLimiterAnswer {
  over: boolean;
  res: {
    remainingPoints: number;
    msBeforeNext: number;
    consumedPoints: number;
    isFirstInDuration: boolean;
  } | null;
  deleted?: boolean;
}

/** How a web process reaches the counters its primary keeps. */
export interface SharedLimiterChannel {
  call(request: SharedLimiterRequest): Promise<SharedLimiterAnswer>;
}

/** The limiters, by the name their keys carry, with their budgets and windows from the configuration. */
function getLimiterBudgets(config: Config): Record<LimiterName, { points: number; duration: number }> {
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

export const LIMITER_NAMES = [
  'create',
  'login-account',
  'login-ip',
  'report-ip',
  'create-ip',
  'safety-check',
] as const;
export type LimiterName = (typeof LIMITER_NAMES)[number];

function toAnswerRes(res: RateLimiterRes | null): SharedLimiterAnswer['res'] {
  if (res === null) return null;
  return {
    remainingPoints: res.remainingPoints,
    msBeforeNext: res.msBeforeNext,
    consumedPoints: res.consumedPoints,
    isFirstInDuration: res.isFirstInDuration,
  };
}

/**
 * The counters a WEB_CONCURRENCY primary keeps for its web processes when there is no Redis: one bounded
 * in-memory limiter per name, so N processes share one budget instead of having N (ADR 0061).
 */
export function createSharedLimiterHost(config: Config): {
  answer(request: SharedLimiterRequest): Promise<SharedLimiterAnswer>;
} {
  const limiters = new Map<string, BoundedMemoryLimiter>();
  for (const [name, budget] of Object.entries(getLimiterBudgets(config))) {
    limiters.set(name, new BoundedMemoryLimiter({ keyPrefix: name, ...budget }));
  }
  return {
    async answer(request) {
      const limiter = limiters.get(request.limiter);
      if (!limiter) throw new Error(`no limiter named ${request.limiter}`);
      switch (request.op) {
        case 'consume':
          return limiter.consume(request.key, request.points).then(
            (res) => ({ over: false, res: toAnswerRes(res) }),
            (res: RateLimiterRes) => ({ over: true, res: toAnswerRes(res) }),
          );
        case 'penalty':
          return { over: false, res: toAnswerRes(await limiter.penalty(request.key, request.points)) };
        case 'reward':
          return { over: false, res: toAnswerRes(await limiter.reward(request.key, request.points)) };
        case 'get':
          return { over: false, res: toAnswerRes(await limiter.get(request.key)) };
        case 'delete':
          return { over: false, res: null, deleted: await limiter.delete(request.key) };
      }
    },
  };
}

/** A limiter whose counters live in the primary (createSharedLimiterHost), reached over `channel`. */
class SharedLimiter extends LimiterBase {
  constructor(
    private readonly name: LimiterName,
    private readonly channel: SharedLimiterChannel,
    budget: { points: number; duration: number },
  ) {
    super({ keyPrefix: name, ...budget });
  }

  private async ask(op: SharedLimiterRequest['op'], key: string | number, points: number) {
    return this.channel.call({ limiter: this.name, op, key: String(key), points });
  }

  private static toRes(answer: SharedLimiterAnswer): RateLimiterRes | null {
    const r = answer.res;
    return r
      ? new RateLimiterRes(r.remainingPoints, r.msBeforeNext, r.consumedPoints, r.isFirstInDuration)
      : null;
  }

  override async consume(key: string | number, points = 1): Promise<RateLimiterRes> {
    const answer = await this.ask('consume', key, points);
    const res = SharedLimiter.toRes(answer) as RateLimiterRes;
    if (answer.over) throw res;
    return res;
  }

  override async penalty(key: string | number, points = 1): Promise<RateLimiterRes> {
    return SharedLimiter.toRes(await this.ask('penalty', key, points)) as RateLimiterRes;
  }

  override async reward(key: string | number, points = 1): Promise<RateLimiterRes> {
    return SharedLimiter.toRes(await this.ask('reward', key, points)) as RateLimiterRes;
  }

  override async get(key: string | number): Promise<RateLimiterRes | null> {
    return SharedLimiter.toRes(await this.ask('get', key, 0));
  }

  override async delete(key: string | number): Promise<boolean> {
    return (await this.ask('delete', key, 0)).deleted === true;
  }

  override block(): Promise<RateLimiterRes> {
    return Promise.reject(new Error('block is not offered by the shared limiter'));
  }

  override set(): Promise<RateLimiterRes> {
    return Promise.reject(new Error('set is not offered by the shared limiter'));
  }
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
