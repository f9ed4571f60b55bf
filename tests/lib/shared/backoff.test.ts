// The one back-off formula every retry loop uses, in each variant a caller asks for: plain doubling with a cap,
// a random spread before or after the cap, and a vendor's own wait as a floor or in place of the doubling.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backoffDelay } from '../../../lib/shared/backoff.ts';

const fixed = (value: number) => () => value;

describe('backoffDelay', () => {
  test('the base doubled per attempt, capped; the exponent stops so the delay stays finite', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((attempt) =>
      backoffDelay({ attempt, baseMs: 100, maxMs: 5_000 }),
    );
    assert.deepEqual(delays, [100, 200, 400, 800, 1_600, 3_200, 5_000]);
    assert.equal(backoffDelay({ attempt: 5_000, baseMs: 1, maxMs: Number.MAX_VALUE }), 2 ** 30);
    assert.equal(backoffDelay({ attempt: 5_000, baseMs: 0, maxMs: 1_000 }), 0);
  });

  test('a jitter multiplies the capped delay by a factor in [min, min + range)', () => {
    const base = { attempt: 4, baseMs: 1_000, maxMs: 10_000 };
    // Equal jitter: the upper half of the delay.
    const equal = { min: 0.5, range: 0.5 };
    assert.equal(backoffDelay({ ...base, jitter: equal, random: fixed(0) }), 4_000);
    assert.equal(backoffDelay({ ...base, jitter: equal, random: fixed(0.5) }), 6_000);
    assert.equal(backoffDelay({ ...base, attempt: 6, jitter: equal, random: fixed(0.5) }), 7_500);
    // Up to a fifth more, past the cap.
    const fifth = { min: 1, range: 0.2 };
    assert.equal(backoffDelay({ ...base, attempt: 9, jitter: fifth, random: fixed(0.5) }), 11_000);
    for (let i = 0; i < 200; i++) {
      const d = backoffDelay({ ...base, jitter: equal });
      assert.ok(d >= 4_000 && d < 8_000, String(d));
    }
  });

  test("Google's Safe Browsing formula: MIN(2^(N-1) * 15 min * (RAND + 1), 24 h), bit for bit", () => {
    const base = 15 * 60_000;
    const max = 24 * 60 * 60_000;
    for (const r of [0, 0.1, 0.3333333333333333, 0.5, 0.7, 0.999999]) {
      for (let n = 1; n <= 9; n++) {
        const google = Math.min(2 ** (n - 1) * base * (r + 1), max);
        const ours = backoffDelay({
          attempt: n,
          baseMs: base,
          maxMs: max,
          jitter: { min: 1, range: 1, beforeCap: true },
          random: fixed(r),
        });
        assert.equal(ours, google, `N=${n} RAND=${r}`);
      }
    }
    // Capped after the spread: 32 h × 1.5 comes to 24 h (capping first would make it 36 h).
    const sb = { baseMs: base, maxMs: max, jitter: { min: 1, range: 1, beforeCap: true } };
    assert.equal(backoffDelay({ ...sb, attempt: 8, random: fixed(0.5) }), max);
    assert.equal(backoffDelay({ ...sb, attempt: 5, random: fixed(0.5) }), 4 * 60 * 60_000 * 1.5);
  });

  test("the other side's wait: a floor by default, or in place of the doubling (at least the base)", () => {
    const base = { attempt: 5, baseMs: 1_000, maxMs: 10_000 };
    assert.equal(backoffDelay({ ...base, retryAfterMs: 2_000 }), 10_000, 'the capped doubling is longer');
    assert.equal(backoffDelay({ ...base, retryAfterMs: 30_000 }), 30_000, 'past the cap when asked');
    assert.equal(backoffDelay({ ...base, retryAfterMs: undefined }), 10_000);
    assert.equal(backoffDelay({ ...base, retryAfterMs: 2_000, retryAfter: 'instead' }), 2_000);
    assert.equal(
      backoffDelay({ ...base, retryAfterMs: 10, retryAfter: 'instead' }),
      1_000,
      'never below the base',
    );
    assert.equal(backoffDelay({ ...base, retryAfterMs: 60_000, retryAfter: 'instead' }), 60_000);
    // In place of the doubling, the wait is spread like it; as a floor, it is not.
    const fifth = { min: 1, range: 0.2 };
    assert.equal(
      backoffDelay({
        ...base,
        retryAfterMs: 2_000,
        retryAfter: 'instead',
        jitter: fifth,
        random: fixed(0.5),
      }),
      2_200,
    );
    const equal = { min: 0.5, range: 0.5 };
    assert.equal(
      backoffDelay({ ...base, attempt: 1, retryAfterMs: 3_000, jitter: equal, random: fixed(0) }),
      3_000,
    );
    assert.equal(
      backoffDelay({ ...base, attempt: 4, retryAfterMs: 3_000, jitter: equal, random: fixed(0) }),
      4_000,
    );
  });
});
