import { expireLink } from '../lib/links/expire_link.ts';
import { ensureExpiryTimer } from '../lib/propagation/ensure_expiry_timer.ts';
import type { ActivityDeps } from './deps.ts';
import { currentSignals, runStep } from './task_context.ts';

/** Expiry (lib/links/expire_link.ts; the timer kept in step by lib/propagation): Postgres decides, the timer only wakes us. */
export function createExpiryActivities(deps: ActivityDeps) {
  return {
    ensureExpiryTimer: (input: { code: string }) =>
      runStep(() => ensureExpiryTimer({ sql: deps.sql, timers: currentSignals().timers }, input.code)),
    expireLink: (input: { code: string }) =>
      runStep(() => expireLink({ ...deps, sync: currentSignals().sync }, input.code)),
  };
}
