// link_sync_queue (migrations/0070_link_sync_queue.sql, ADR 0024): bulk changes waiting for the sync-queue
// drainer. A row is written in the transaction of the change and removed only after the code's sync is done.
import type { Db } from './sql.ts';

/** One queued code as the drainer sees it. */
export interface QueuedSync {
  code: string;
  reason: string;
  /** Moves on every enqueue: a row is removed only at the generation whose sync finished. */
  generation: number;
  /** Failed batch attempts so far (reset by a new enqueue). */
  attempts: number;
  enqueuedAt: Date;
}

/** Where the queue stands (ops page, metrics, the drainer's next wake-up). */
export interface SyncQueueStats {
  /** Codes waiting (due or backing off). */
  depth: number;
  /** Codes due now. */
  due: number;
  /** Codes that failed at least once and wait for their next attempt. */
  retrying: number;
  /** When the oldest waiting code was enqueued; null when the queue is empty. */
  oldestEnqueuedAt: Date | null;
  /** Milliseconds until the next code backing off is due (0: some are due now); null when the queue is empty. */
  nextDueInMs: number | null;
}

/**
 * Which queued codes the drainer takes first (ADR 0104), as stored in `priority`:
 * - `change`: a change to a link that exists, which readers may already follow through a replica (a retarget, a
 *   status, an expiry, an adopted back-half still pointing at the old CMS): first;
 * - `created`: a link someone just made (an API batch, an import), about to be shared;
 * - `archive`: a link a backfill minted for an archive post, which nobody has been given yet: last.
 * Within a class, oldest due first. Our own front answers every class from the moment it is written.
 */
export const SYNC_PRIORITIES = { change: 0, created: 1, archive: 2 } as const;
export type SyncPriority = keyof typeof SYNC_PRIORITIES;
const PRIORITY_VALUES = Object.values(SYNC_PRIORITIES);

/**
 * Queues codes for the drainer, inside the caller's transaction. A code already queued gets the newer reason, a
 * new generation (so a batch running with the old one will not remove it), the more urgent of its two priorities
 * and is due at once; it keeps its original enqueued_at (how long its replicas have been behind).
 */
export async function enqueueLinkSyncs(
  db: Db,
  codes: readonly string[],
  reason: string,
  priority: SyncPriority = 'change',
): Promise<void> {
  if (codes.length === 0) return;
  await db`
    INSERT INTO link_sync_queue (code, reason, priority)
    SELECT DISTINCT code, ${reason}::text, ${SYNC_PRIORITIES[priority]}::smallint
    FROM unnest(${db.array([...codes])}::text[]) AS t(code)
    ON CONFLICT (code) DO UPDATE
      SET reason = EXCLUDED.reason,
          generation = link_sync_queue.generation + 1,
          priority = least(link_sync_queue.priority, EXCLUDED.priority),
          attempts = 0,
          next_attempt_at = now(),
          last_error = NULL`;
}

/**
 * The next `limit` due codes: by priority, then oldest due first. One range read of the due index per priority
 * (codes backing off are never walked past), so a take costs the same at any depth.
 */
export async function listDueSyncs(db: Db, limit: number): Promise<string[]> {
  const rows = await db<{ code: string }[]>`
    SELECT code FROM unnest(${db.array(PRIORITY_VALUES.map(String))}::smallint[]) AS p(priority)
    CROSS JOIN LATERAL (
      SELECT q.code, q.next_attempt_at FROM link_sync_queue AS q
      WHERE q.priority = p.priority AND q.next_attempt_at <= now()
      ORDER BY q.next_attempt_at, q.code LIMIT ${limit}
    ) AS due
    ORDER BY p.priority, due.next_attempt_at, due.code LIMIT ${limit}`;
  return rows.map((r) => r.code);
}

/** The queue rows of `codes` that are still queued (a retried batch skips what an earlier attempt finished). */
export async function getQueuedSyncs(db: Db, codes: readonly string[]): Promise<Map<string, QueuedSync>> {
  if (codes.length === 0) return new Map();
  const rows = await db<QueuedSync[]>`
    SELECT q.code, q.reason, q.generation, q.attempts, q.enqueued_at AS "enqueuedAt"
    FROM unnest(${db.array([...codes])}::text[]) AS t(code)
    JOIN link_sync_queue AS q ON q.code = t.code COLLATE "C"`;
  return new Map(rows.map((r) => [r.code, r]));
}

/** Removes rows whose sync is done, only at the generation that was synced (a newer enqueue stays). */
export async function removeSyncedCodes(
  db: Db,
  done: readonly { code: string; generation: number }[],
): Promise<number> {
  if (done.length === 0) return 0;
  const removed = await db`
    DELETE FROM link_sync_queue AS q
    USING unnest(${db.array(done.map((d) => d.code))}::text[],
                 ${db.array(done.map((d) => String(d.generation)))}::int[]) AS t(code, generation)
    WHERE q.code = t.code COLLATE "C" AND q.generation = t.generation`;
  return removed.count;
}

/** Records a failed attempt per code (same generation only) and when to try again. */
export async function deferSyncs(
  db: Db,
  failed: readonly { code: string; generation: number; delayMs: number; error: string }[],
): Promise<void> {
  if (failed.length === 0) return;
  await db`
    UPDATE link_sync_queue AS q
    SET attempts = q.attempts + 1,
        next_attempt_at = now() + make_interval(secs => t.delay_ms / 1000.0),
        last_error = left(t.error, 500)
    FROM unnest(${db.array(failed.map((f) => f.code))}::text[],
                ${db.array(failed.map((f) => String(f.generation)))}::int[],
                ${db.array(failed.map((f) => String(Math.max(0, Math.round(f.delayMs)))))}::int[],
                ${db.array(failed.map((f) => f.error))}::text[]) AS t(code, generation, delay_ms, error)
    WHERE q.code = t.code COLLATE "C" AND q.generation = t.generation`;
}

/**
 * Whether any code is queued, and when the first one is due (null: the queue is empty): one row per priority read
 * through the due index, whatever the queue's depth. What the drainer and its kicks need on every step; the full stats
 * (getSyncQueueStats) count every row and are for the ops page and metrics.
 */
export async function getSyncQueueHead(db: Db): Promise<{ nextDueInMs: number | null }> {
  const [row] = await db<{ nextDueInMs: number | null }[]>`
    SELECT greatest(0, ceil(extract(epoch FROM min(head.next_attempt_at) - now()) * 1000))::int AS "nextDueInMs"
    FROM unnest(${db.array(PRIORITY_VALUES.map(String))}::smallint[]) AS p(priority)
    CROSS JOIN LATERAL (
      SELECT q.next_attempt_at FROM link_sync_queue AS q
      WHERE q.priority = p.priority ORDER BY q.next_attempt_at LIMIT 1
    ) AS head
    HAVING count(*) > 0`;
  return { nextDueInMs: row ? row.nextDueInMs : null };
}

/** Depth, due, retrying, the oldest row's age and the next due time, in one statement. */
export async function getSyncQueueStats(db: Db): Promise<SyncQueueStats> {
  const [row] = await db<
    {
      depth: number;
      due: number;
      retrying: number;
      oldestEnqueuedAt: Date | null;
      nextDueInMs: number | null;
    }[]
  >`
    SELECT count(*)::int AS depth,
           count(*) FILTER (WHERE next_attempt_at <= now())::int AS due,
           count(*) FILTER (WHERE attempts > 0)::int AS retrying,
           min(enqueued_at) AS "oldestEnqueuedAt",
           CASE WHEN count(*) = 0 THEN NULL
                ELSE greatest(0, ceil(extract(epoch FROM min(next_attempt_at) - now()) * 1000))::int
           END AS "nextDueInMs"
    FROM link_sync_queue`;
  return {
    depth: row?.depth ?? 0,
    due: row?.due ?? 0,
    retrying: row?.retrying ?? 0,
    oldestEnqueuedAt: row?.oldestEnqueuedAt ?? null,
    nextDueInMs: row?.nextDueInMs ?? null,
  };
}
