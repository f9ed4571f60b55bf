// The in-process limiter (the limiter without Redis, and the Redis limiters' insurance): it limits, it forgets
// the least recently used keys beyond its bound, and it costs memory for the keys it has seen, not up front.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { BoundedMemoryLimiter, LIMITER_KEYS_MAX } from '../../../lib/shared/bounded_memory_limiter.ts';

describe('BoundedMemoryLimiter', () => {
  test('limits a key to its points per window; a reward gives one back', async () => {
    const limiter = new BoundedMemoryLimiter({ keyPrefix: 't', points: 2, duration: 60 });
    await limiter.consume('k');
    const second = await limiter.consume('k');
    assert.equal(second.remainingPoints, 0);
    const refused = await limiter.consume('k').then(
      () => assert.fail('the third consume must be refused'),
      (res: unknown) => res,
    );
    assert.ok(refused instanceof RateLimiterRes);
    assert.ok(refused.msBeforeNext > 0 && refused.msBeforeNext <= 60_000);
    await limiter.reward('k', 2);
    assert.equal((await limiter.consume('k')).remainingPoints, 0);
    // Another key has its own budget.
    assert.equal((await limiter.consume('other')).remainingPoints, 1);
  });

  test('beyond maxKeys the least recently used key is forgotten (its count starts again)', async () => {
    const limiter = new BoundedMemoryLimiter({ keyPrefix: 't', points: 5, duration: 60, maxKeys: 3 });
    for (const key of ['a', 'b', 'c']) await limiter.consume(key, 4);
    await limiter.consume('a'); // a is now the most recently used
    await limiter.consume('d'); // b goes
    assert.equal(limiter.size, 3);
    assert.equal((await limiter.consume('b')).consumedPoints, 1, 'b was forgotten');
    await assert.rejects(limiter.consume('a', 1), 'a was kept (4 + 1 + 1 > 5)');
  });

  test('allocates for the keys it sees, not for LIMITER_KEYS_MAX up front', async () => {
    // lru-cache with `max` allocates typed arrays for every key at construction (three Uint32Arrays of
    // LIMITER_KEYS_MAX: 1.2 MB a limiter, plus two arrays of as many slots on the heap). Six of these live in each
    // web process.
    const before = process.memoryUsage().arrayBuffers;
    const limiters = Array.from(
      { length: 6 },
      (_, i) => new BoundedMemoryLimiter({ keyPrefix: `m${i}`, points: 10, duration: 60 }),
    );
    const grown = process.memoryUsage().arrayBuffers - before;
    assert.ok(grown < 256 * 1024, `six limiters took ${grown} bytes of array buffers`);
    // Still bounded at LIMITER_KEYS_MAX, and growing with use.
    for (let i = 0; i < 1000; i++) await limiters[0]!.consume(`key-${i}`);
    assert.equal(limiters[0]!.size, 1000);
    assert.ok(LIMITER_KEYS_MAX >= 1000);
  });
});
