import { expireDueLinks, expireLink } from '../lib/links/expire_link.ts';
import { ensureExpiryTimer } from '../lib/propagation/ensure_expiry_timer.ts';
import type { ActivityDeps } from './deps.ts';
import { currentSignals, runStep, withKeepAlive } from './task_context.ts';

/** How often a sweep heartbeats while its transaction runs (the workflow's heartbeat timeout is 10 s). */
const KEEP_ALIVE_MS = 2_000;

/**
 * Expiry (lib/links/expire_link.ts, ADR 0091): Postgres decides, the one sweeper expires due links in batches.
 * ensureExpiryTimer tells the sweeper a link's date (the activity keeps its name: sync:{code} histories record
 * it); expireLink is what the per-link timers still running from before the sweeper call.
 */
export function createExpiryActivities(deps: ActivityDeps) {
  const expiryDeps = () => ({ ...deps, queue: currentSignals().queue });
  return {
    // A worker lost mid-sweep is noticed within the heartbeat timeout, not the start-to-close one; its
    // transaction rolled back with its connection, so the retry expires the same links once.
    expireDueLinks: (_input: Record<string, never>) =>
      runStep(() => withKeepAlive(KEEP_ALIVE_MS, () => expireDueLinks(expiryDeps()))),
    ensureExpiryTimer: (input: { code: string }) =>
      runStep(() => ensureExpiryTimer({ sql: deps.sql, sweeper: currentSignals().sweeper }, input.code)),
    expireLink: (input: { code: string }) => runStep(() => expireLink(expiryDeps(), input.code)),
  };
}
