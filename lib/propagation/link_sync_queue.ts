// Where the sync queue of bulk changes stands (ADR 0024): the ops page, the worker's metrics and the kicks that
// wake its drainer read it here. The queue itself is written by the bulk changes, in their own transactions
// (lib/stores/link_sync_queue_store.ts), and drained by sync_link_batch.ts, which propagates each batch.
import { getSyncQueueHead, getSyncQueueStats, type SyncQueueStats } from '../stores/link_sync_queue_store.ts';
import type { Db } from '../stores/sql.ts';
import type { SyncQueueKicker } from '../temporal/link_sync.ts';

export type { SyncQueueStats };

/** The queue's depth, how many are retrying, and how long the oldest code has waited (seconds). */
export interface SyncQueueOverview extends SyncQueueStats {
  oldestAgeSeconds: number;
}

export async function getSyncQueueOverview(db: Db, now: Date = new Date()): Promise<SyncQueueOverview> {
  const stats = await getSyncQueueStats(db);
  const oldestAgeSeconds = stats.oldestEnqueuedAt
    ? Math.max(0, (now.getTime() - stats.oldestEnqueuedAt.getTime()) / 1000)
    : 0;
  return { ...stats, oldestAgeSeconds };
}

/**
 * Wakes the drainer when codes are waiting (a backfill step, the worker's start): rows queued while Temporal
 * could not take the kick, or left by a drainer that ended, are drained. Returns whether it kicked.
 */
export async function kickSyncQueueIfWaiting(
  deps: { sql: Db; queue: SyncQueueKicker },
  reason: string,
): Promise<boolean> {
  // One row through the due index (a backfill step runs this after every batch; a count would read the queue).
  const head = await getSyncQueueHead(deps.sql);
  if (head.nextDueInMs === null) return false;
  await deps.queue.kickSyncQueue(reason);
  return true;
}
