import { expireDueLinks, expireLink } from '../lib/links/expire_link.ts';
import { ensureExpiryTimer } from '../lib/propagation/ensure_expiry_timer.ts';
import type { ActivityDeps } from './deps.ts';
import { currentSignals, runStep } from './task_context.ts';

/**
 * Expiry (lib/links/expire_link.ts, ADR 0091): Postgres decides, the one sweeper expires due links in batches.
 * ensureExpiryTimer tells the sweeper a link's date (the activity keeps its name: sync:{code} histories record
 * it); expireLink is what the per-link timers still running from before the sweeper call.
 */
export function createExpiryActivities(deps: ActivityDeps) {
  const expiryDeps = () => ({ ...deps, queue: currentSignals().queue });
  return {
    expireDueLinks: (_input: Record<string, never>) => runStep(() => expireDueLinks(expiryDeps())),
    ensureExpiryTimer: (input: { code: string }) =>
      runStep(() => ensureExpiryTimer({ sql: deps.sql, sweeper: currentSignals().sweeper }, input.code)),
    expireLink: (input: { code: string }) => runStep(() => expireLink(expiryDeps(), input.code)),
  };
}
