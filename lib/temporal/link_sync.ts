/**
 * Hands a changed link to its sync workflow (`sync:{code}`), which brings the serving store, caches and vendors
 * in line with Postgres. The web tier's WorkflowGateway and the activities' Temporal client both provide it
 * (lib/temporal); lib code that changes links asks for it rather than for Temporal (ADR 0015).
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
