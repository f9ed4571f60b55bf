// What one attempt's answer means for its message (ADR 0082): delivered, try again (when), failed at once, or
// dead after the round's time or attempts ran out. Pure, so the rules are tested without a receiver.

export interface RetrySettings {
  retryBaseMs: number;
  retryMaxMs: number;
  giveUpAfterMs: number;
  maxAttempts: number;
}

/** What came back: an HTTP status (with Retry-After when sent), or no answer at all. */
export type AttemptResult =
  | { kind: 'answer'; status: number; retryAfter: string | null }
  | { kind: 'no-answer'; why: 'timeout' | 'connection' }
  | { kind: 'refused' };

export interface AttemptDecision {
  outcome: 'delivered' | 'retry' | 'failed' | 'dead';
  nextAttemptAt: Date | null;
  /** Hold every message of the endpoint until then (a 429). */
  pauseEndpointUntil: Date | null;
  /** Switch the endpoint off (the receiver answered 410 Gone). */
  disableEndpoint: boolean;
}

/** Seconds or an HTTP date, as Retry-After carries it; null when it is neither. */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/**
 * The wait before attempt `attempts + 1`: the base doubled per attempt made, capped, with up to a fifth taken
 * off at random so a receiver coming back is not met by every message at once.
 */
export function retryDelayMs(attempts: number, settings: RetrySettings, random = Math.random): number {
  const raw = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(raw * (1 - 0.2 * random()));
}

/**
 * Decides after an attempt. `attempts` counts this one. 2xx: delivered. 408, 429, 5xx, a timeout or a lost
 * connection: retried (a 429 after its Retry-After), unless the next try would fall past the round's give-up
 * time or the attempts are spent: dead. Any other answer (3xx too: redirects are not followed) and a refusal by
 * the outgoing-request rule: failed at once; 410 also switches the endpoint off.
 */
export function decideAfterAttempt(
  result: AttemptResult,
  message: { attempts: number; roundStartedAt: Date },
  settings: RetrySettings,
  now: Date,
  random = Math.random,
): AttemptDecision {
  const done = (outcome: AttemptDecision['outcome'], disableEndpoint = false): AttemptDecision => ({
    outcome,
    nextAttemptAt: null,
    pauseEndpointUntil: null,
    disableEndpoint,
  });
  if (result.kind === 'refused') return done('failed');
  let waitMs: number;
  let pause = false;
  if (result.kind === 'answer') {
    const { status } = result;
    if (status >= 200 && status < 300) return done('delivered');
    if (status === 429) {
      // The receiver's own wait is honoured as asked (never below the base): a wait past the round's give-up
      // time makes the message dead now rather than held for nothing.
      waitMs = parseRetryAfter(result.retryAfter, now) ?? retryDelayMs(message.attempts, settings, random);
      waitMs = Math.max(waitMs, settings.retryBaseMs);
      pause = true;
    } else if (status === 408 || status >= 500) {
      waitMs = retryDelayMs(message.attempts, settings, random);
    } else {
      return done('failed', status === 410);
    }
  } else {
    waitMs = retryDelayMs(message.attempts, settings, random);
  }
  const next = new Date(now.getTime() + waitMs);
  const giveUpAt = message.roundStartedAt.getTime() + settings.giveUpAfterMs;
  if (message.attempts >= settings.maxAttempts || next.getTime() > giveUpAt) return done('dead');
  return {
    outcome: 'retry',
    nextAttemptAt: next,
    pauseEndpointUntil: pause ? next : null,
    disableEndpoint: false,
  };
}
