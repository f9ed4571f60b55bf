// The counters a WEB_CONCURRENCY primary keeps for its web processes without Redis (ADR 0061), and their client.
import { RateLimiterRes } from 'rate-limiter-flexible';
import { BoundedMemoryLimiter, LimiterBase } from './bounded_memory_limiter.ts';
import type { Config } from './config.ts';
import { getLimiterBudgets, type LimiterName } from './limiter_budgets.ts';

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
export class SharedLimiter extends LimiterBase {
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
