// The two-check rule: one failed check proves little (a deploy, an outage, a rate limit), so a destination is
// only 'dead' or 'moved' after two failed checks at least a day apart; in between it is 'suspect' and nothing
// acts on it. The clock is the caller's (`now`), so the rule is tested without waiting a day.
import type { DestinationOutcome, DestinationVerdict } from '../stores/destination_state_store.ts';

export const DAY_MS = 86_400_000;
/** How long after a first failure the confirming check runs (a day, and a little, so it is surely a day apart). */
export const CONFIRM_AFTER_MS = DAY_MS + 15 * 60_000;

export interface PreviousState {
  verdict: DestinationVerdict;
  failures: number;
  firstFailedAt: Date | null;
}

export interface NextState {
  verdict: DestinationVerdict;
  verdictChanged: boolean;
  failures: number;
  firstFailedAt: Date | null;
  nextCheckAt: Date;
}

export function isFailedOutcome(outcome: DestinationOutcome): boolean {
  return outcome !== 'ok';
}

/**
 * The state after a check with `outcome` at `now`. A failure keeps the first failure's time; a verdict needs
 * `failures >= 2` and a day between the first failure and this one; a good check clears it all. A failing
 * destination is checked again after CONFIRM_AFTER_MS (sooner than the cycle), then on the cycle.
 */
export function nextDestinationState(
  previous: PreviousState,
  outcome: DestinationOutcome,
  now: Date,
  intervalMs: number,
): NextState {
  const cycle = new Date(now.getTime() + intervalMs);
  if (!isFailedOutcome(outcome)) {
    return {
      verdict: 'ok',
      verdictChanged: previous.verdict !== 'ok',
      failures: 0,
      firstFailedAt: null,
      nextCheckAt: cycle,
    };
  }
  const failures = previous.failures + 1;
  const firstFailedAt = previous.firstFailedAt ?? now;
  const confirmed = failures >= 2 && now.getTime() - firstFailedAt.getTime() >= DAY_MS;
  const verdict: DestinationVerdict = confirmed ? (outcome === 'moved' ? 'moved' : 'dead') : 'suspect';
  const confirmAt = new Date(firstFailedAt.getTime() + CONFIRM_AFTER_MS);
  return {
    verdict,
    verdictChanged: previous.verdict !== verdict,
    failures,
    firstFailedAt,
    nextCheckAt:
      confirmed || confirmAt <= now ? cycle : new Date(Math.min(confirmAt.getTime(), cycle.getTime())),
  };
}

/** A duration like `7d`, `12h` or `30m` in milliseconds (the settings' form). */
export function durationMs(value: string): number {
  const m = /^(\d+)(m|h|d)$/.exec(value);
  if (!m) throw new Error(`not a duration: ${value}`);
  return Number(m[1]) * { m: 60_000, h: 3_600_000, d: DAY_MS }[m[2] as 'm' | 'h' | 'd'];
}
