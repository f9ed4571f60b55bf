// What lib code asks of the per-link workflows, without Temporal: a link's propagation (`sync:{code}`), the
// sync queue's drainer, and a link's expiry timer. lib/temporal implements them over a Temporal client
// (link_signals.ts, the web tier's WorkflowGateway); capability code takes them as dependencies (ADR 0015).

/**
 * Hands a changed link to its sync workflow (`sync:{code}`), which brings the serving store, caches and vendors
 * in line with Postgres. The web tier's WorkflowGateway and the activities' Temporal client both provide it
 * (lib/temporal); lib code that changes links asks for it rather than for Temporal.
 */
export interface LinkSyncRequester {
  syncLink(code: string, reason: string): Promise<unknown>;
}

/**
 * Wakes the sync-queue drainer (`sync-queue:{taskQueue}`, ADR 0024) after codes were queued in Postgres
 * (link_sync_queue, written in the transaction of a bulk change). The rows are the durable part: a kick that
 * is lost only delays them until the next kick (any bulk change, a backfill step, the worker's start).
 */
export interface SyncQueueKicker {
  kickSyncQueue(reason: string): Promise<unknown>;
}

/** The durable expiry timers, one per link (`expire:{code}`); link_signals.ts implements them over Temporal. */
export interface ExpiryTimers {
  /**
   * Makes the code's timer know its expiry: starts it (or moves its deadline) for a date; tells a running one
   * that the expiry is gone for null (nothing to do if none runs).
   */
  set(code: string, expiresAtMs: number | null): Promise<'armed' | 'disarmed' | 'none'>;
  /** True while the code's timer runs. */
  isRunning(code: string): Promise<boolean>;
}
