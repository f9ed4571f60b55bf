import { expireDueLink, syncExpiryTimer } from '../lib/links/expire_link.ts';
import type { ActivityDeps } from './deps.ts';
import { currentSignals, runStep } from './task_context.ts';

/** Expiry (lib/links/expire_link.ts): Postgres decides, the timer only wakes us. */
export function createExpiryActivities(deps: ActivityDeps) {
  return {
    ensureExpiryTimer: (input: { code: string }) =>
      runStep(() => syncExpiryTimer({ sql: deps.sql, timers: currentSignals().timers }, input.code)),
    expireLink: (input: { code: string }) =>
      runStep(() => expireDueLink({ ...deps, sync: currentSignals().sync }, input.code)),
  };
}
