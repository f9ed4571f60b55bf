// How long to wait before trying again: a base doubled per attempt, capped, maybe spread at random, and
// honouring the wait the other side asked for (Retry-After, a rate limit's reset). Every retry loop of ours
// computes its delay here; each keeps its own numbers and says which variant it needs.

export interface BackoffOptions {
  /** 1 for the first retry: the delay is `baseMs` doubled `attempt - 1` times. */
  attempt: number;
  baseMs: number;
  /** The doubled delay never goes past this (a wait the other side asked for may). */
  maxMs: number;
  /**
   * The delay times a random factor in [min, min + range): { min: 0.5, range: 0.5 } spreads it over its upper
   * half, { min: 1, range: 0.2 } adds up to a fifth. Applied after the cap, unless `beforeCap` (Google's
   * Safe Browsing formula caps the spread delay).
   */
  jitter?: { min: number; range: number; beforeCap?: boolean };
  /** The other side's own wait for this retry. */
  retryAfterMs?: number | undefined;
  /**
   * `atLeast` (the default): the delay is never shorter than retryAfterMs. `instead`: retryAfterMs (at least
   * baseMs) replaces the doubled delay, then is spread like it; a vendor's rate limit says when, not doubling.
   */
  retryAfter?: 'atLeast' | 'instead';
  /** For tests; Math.random otherwise. */
  random?: () => number;
}

/** The exponent stops here: the delay stays a finite number however many attempts were made. */
const MAX_DOUBLINGS = 30;

/** Milliseconds to wait before attempt `attempt + 1` (see BackoffOptions). */
export function backoffDelay(options: BackoffOptions): number {
  const { attempt, baseMs, maxMs, jitter, retryAfterMs } = options;
  const asked = retryAfterMs !== undefined;
  let delay = baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), MAX_DOUBLINGS);
  if (asked && options.retryAfter === 'instead') delay = Math.max(retryAfterMs, baseMs);
  else if (!jitter?.beforeCap) delay = Math.min(delay, maxMs);
  if (jitter) delay *= jitter.min + (options.random ?? Math.random)() * jitter.range;
  if (jitter?.beforeCap) delay = Math.min(delay, maxMs);
  if (asked && options.retryAfter !== 'instead') delay = Math.max(delay, retryAfterMs);
  return delay;
}
