// Restored links are due a safety re-scan (an escrow row cannot vouch for its own verdict): the restore marks them
// due (safety_checked_at cleared) and leaves this request in settings; the worker starts the re-scan at its next
// start, when it can reach Temporal, and clears the request. The scheduled re-scan would reach them too, within
// SAFETY_RESCAN_INTERVAL: the request only makes it happen now.
import type { Logger } from '../shared/logger.ts';
import { deleteSetting, getSetting, upsertSetting } from '../stores/settings_store.ts';
import type { Db, Sql } from '../stores/sql.ts';

/** Settings key of a re-scan a restore asked for. */
export const RESCAN_AFTER_RESTORE_SETTING = 'rescan_after_restore';

export interface RescanRequest {
  /** When the restore finished (ISO). */
  requestedAt: string;
  /** Links it loaded. */
  links: number;
  /** Where from, for the log. */
  source: string;
}

/** Asks for a re-scan of everything restored (in the restore's transaction: both happen or neither). */
export async function requestRescanAfterRestore(db: Db, request: RescanRequest): Promise<void> {
  await upsertSetting(db, RESCAN_AFTER_RESTORE_SETTING, request);
}

/**
 * Starts the re-scan a restore asked for, if any (`start`: the worker's way to start it now), then forgets the
 * request. A failure to start leaves it for the next start; the scheduled re-scan covers the links meanwhile.
 * Returns the request served, or null.
 */
export async function startRequestedRescan(
  deps: { sql: Sql; logger: Logger },
  start: () => Promise<void>,
): Promise<RescanRequest | null> {
  const request = await getSetting<RescanRequest>(deps.sql, RESCAN_AFTER_RESTORE_SETTING);
  if (!request) return null;
  await start();
  await deleteSetting(deps.sql, RESCAN_AFTER_RESTORE_SETTING);
  deps.logger.info(
    { requestedAt: request.requestedAt, links: request.links },
    'safety re-scan started for the links of a restore',
  );
  return request;
}
