// The retry rules of outgoing webhooks (lib/webhooks/retry_policy.ts, ADR 0082), as a pure function: which answers
// are retried, when, when a message goes dead, and Retry-After in both its forms.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decideAfterAttempt, parseRetryAfter, retryDelayMs } from '../../../lib/webhooks/retry_policy.ts';

const settings = { retryBaseMs: 1_000, retryMaxMs: 60_000, giveUpAfterMs: 3_600_000, maxAttempts: 5 };
const now = new Date('2026-12-02T12:00:00Z');
const round = { attempts: 1, roundStartedAt: now };
const noJitter = () => 0;
const answer = (status: number, retryAfter: string | null = null) =>
  ({ kind: 'answer', status, retryAfter }) as const;

describe('outgoing webhook retry rules', () => {
  test('2xx delivered; 400, 404, 3xx and a refusal fail at once; 410 also switches the endpoint off', () => {
    for (const status of [200, 201, 204, 299])
      assert.equal(decideAfterAttempt(answer(status), round, settings, now).outcome, 'delivered');
    for (const status of [301, 302, 400, 401, 403, 404, 422]) {
      const d = decideAfterAttempt(answer(status), round, settings, now);
      assert.deepEqual([d.outcome, d.disableEndpoint], ['failed', false], String(status));
    }
    const gone = decideAfterAttempt(answer(410), round, settings, now);
    assert.deepEqual([gone.outcome, gone.disableEndpoint], ['failed', true]);
    assert.equal(decideAfterAttempt({ kind: 'refused' }, round, settings, now).outcome, 'failed');
  });

  test('408, 5xx, timeouts and lost connections retried with doubling backoff, capped', () => {
    for (const result of [
      answer(408),
      answer(500),
      answer(503),
      { kind: 'no-answer', why: 'timeout' } as const,
      { kind: 'no-answer', why: 'connection' } as const,
    ]) {
      const d = decideAfterAttempt(result, round, settings, now, noJitter);
      assert.equal(d.outcome, 'retry');
      assert.equal(d.nextAttemptAt!.getTime() - now.getTime(), 1_000);
      assert.equal(d.pauseEndpointUntil, null);
    }
    assert.equal(retryDelayMs(3, settings, noJitter), 4_000);
    assert.equal(retryDelayMs(20, settings, noJitter), 60_000);
    // Jitter takes off at most a fifth.
    assert.equal(
      retryDelayMs(1, settings, () => 1),
      800,
    );
  });

  test('dead when the attempts are spent or the next try falls past the round give-up time', () => {
    assert.equal(
      decideAfterAttempt(answer(500), { ...round, attempts: 5 }, settings, now, noJitter).outcome,
      'dead',
    );
    const late = { attempts: 2, roundStartedAt: new Date(now.getTime() - 3_599_500) };
    assert.equal(decideAfterAttempt(answer(500), late, settings, now, noJitter).outcome, 'dead');
  });

  test('429 waits for Retry-After (seconds or a date, up to the give-up time) and pauses the endpoint', () => {
    const d = decideAfterAttempt(answer(429, '30'), round, settings, now, noJitter);
    assert.equal(d.outcome, 'retry');
    assert.equal(d.nextAttemptAt!.getTime() - now.getTime(), 30_000);
    assert.deepEqual(d.pauseEndpointUntil, d.nextAttemptAt);
    const dated = decideAfterAttempt(answer(429, 'Wed, 02 Dec 2026 12:00:10 GMT'), round, settings, now);
    assert.equal(dated.nextAttemptAt!.getTime() - now.getTime(), 10_000);
    const long = decideAfterAttempt(answer(429, '600'), round, settings, now);
    assert.equal(
      long.nextAttemptAt!.getTime() - now.getTime(),
      600_000,
      'as asked, above WEBHOOK_RETRY_MAX_MS',
    );
    const huge = decideAfterAttempt(answer(429, '86400'), round, settings, now);
    assert.equal(huge.outcome, 'dead', 'a wait past the give-up time');
    assert.equal(parseRetryAfter('soon', now), null);
    assert.equal(parseRetryAfter(null, now), null);
  });
});
