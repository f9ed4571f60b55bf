// The Bitly fake's scripted and random failures: failNext's queue, seeded chaos, keywords taken by others.
import type { BitlyStats, FakeChaos, FakeFailure } from './types.ts';

/** mulberry32: a tiny seeded PRNG, so chaos runs can be reproduced. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class FailureScript {
  chaos: FakeChaos | null = null;
  private failures: FakeFailure[] = [];
  private keywordsToSteal = 0;
  private random: () => number = Math.random;

  constructor(private readonly stats: BitlyStats) {}

  failNext(failure: FakeFailure): void {
    this.failures.push({ times: 1, ...failure });
  }

  setChaos(chaos: FakeChaos | null): void {
    this.chaos = chaos;
    this.random = chaos?.seed !== undefined ? seededRandom(chaos.seed) : Math.random;
  }

  stealNextKeywords(n: number): void {
    this.keywordsToSteal += n;
  }

  /** True (and one fewer left) when the next keyword asked for is to be taken by someone else first. */
  stealKeyword(): boolean {
    if (this.keywordsToSteal <= 0) return false;
    this.keywordsToSteal--;
    return true;
  }

  /** Forgets scripted failures, stolen keywords and chaos. */
  clear(): void {
    this.failures = [];
    this.keywordsToSteal = 0;
    this.setChaos(null);
  }

  /** What the next request to `method path` meets: a scripted failure first, else maybe a random one. */
  next(method: string, path: string): FakeFailure | null {
    return this.takeFailure(method, path) ?? this.chaosFailure(path);
  }

  private takeFailure(method: string, path: string): FakeFailure | null {
    const index = this.failures.findIndex(
      (f) =>
        (f.method === undefined || f.method === method) &&
        (f.path === undefined || (typeof f.path === 'string' ? path.startsWith(f.path) : f.path.test(path))),
    );
    if (index < 0) return null;
    const failure = this.failures[index]!;
    failure.times = (failure.times ?? 1) - 1;
    if (failure.times <= 0) this.failures.splice(index, 1);
    return failure;
  }

  private chaosFailure(path: string): FakeFailure | null {
    const chaos = this.chaos;
    if (!chaos || chaos.kinds.length === 0) return null;
    if (chaos.pathPrefix && !path.startsWith(chaos.pathPrefix)) return null;
    if (this.random() >= chaos.rate) return null;
    this.stats.chaos++;
    const kind = chaos.kinds[Math.floor(this.random() * chaos.kinds.length)]!;
    switch (kind) {
      case '5xx':
        return this.random() < 0.5
          ? { status: 500, message: 'INTERNAL_ERROR' }
          : { status: 503, message: 'TEMPORARILY_UNAVAILABLE' };
      case '429':
        return { status: 429, message: 'RATE_LIMIT_EXCEEDED' };
      case '403-rate':
        return { status: 403, message: 'RATE_LIMIT_EXCEEDED', headers: { 'X-Ratelimit-Reason': 'hourly' } };
      case 'timeout':
        return { hang: true };
      case 'drop':
        return { drop: true };
      case 'slow':
        return { delayMs: chaos.slowMs ?? 300 };
    }
  }
}
