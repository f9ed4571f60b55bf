// A fixed-window rate limiter in process memory with bounded keys: a flood of distinct keys cannot grow the heap.
import { LRUCache } from 'lru-cache';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Keys one in-process limiter tracks at most (least recently used beyond it are forgotten): a flood of distinct
 * e-mails or addresses costs bounded memory (~200 bytes a key), never the process.
 */
export const LIMITER_KEYS_MAX = 100_000;
// The library's base class (key prefixes, points, duration; what its Redis limiter accepts as insurance). Its
// typings declare it but the package does not export it at run time: reach it through a subclass it exports.
export const LimiterBase = Object.getPrototypeOf(RateLimiterMemory) as typeof RateLimiterAbstract;

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
