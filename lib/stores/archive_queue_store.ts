// archive_queue (migrations/0095_archive_queue.sql, ADR 0076): destinations of links made in bulk waiting for
// their archived copy. A row is written in the transaction that makes or retargets the link, and removed by the
// drainer (lib/archive/archive_queue.ts) once the copy is recorded or skipped. Every write of the drainer is
// conditional on the generation it read, so a request queued meanwhile (a retarget) survives it.
import type { Db } from './sql.ts';

export type ArchiveQueueStep = 'begin' | 'poll' | 'lookup';

/** One queued destination as the drainer takes it. */
export interface QueuedArchive {
  code: string;
  generation: number;
  step: ArchiveQueueStep;
  url: string | null;
  jobId: string | null;
  polls: number;
  attempts: number;
}

/** Where the queue stands (the drainer's next wake-up, the operations page). */
export interface ArchiveQueueStats {
  depth: number;
  due: number;
  /** Milliseconds until the first row is due (0: some are due now); null when the queue is empty. */
  nextDueInMs: number | null;
}

/**
 * Queues links for an archived copy, inside the caller's transaction. A code already queued starts over for its
 * new destination (a new generation, step `begin`, due at once) and keeps its enqueued_at.
 */
export async function enqueueArchiveCopies(db: Db, codes: readonly string[], reason: string): Promise<void> {
  if (codes.length === 0) return;
  await db`
    INSERT INTO archive_queue (code, reason)
    SELECT DISTINCT code, ${reason}::text FROM unnest(${db.array([...codes])}::text[]) AS t(code)
    ON CONFLICT (code) DO UPDATE
      SET reason = EXCLUDED.reason, generation = archive_queue.generation + 1, step = 'begin', url = NULL,
          job_id = NULL, polls = 0, attempts = 0, last_error = NULL, next_attempt_at = now()`;
}

/** Up to `limit` due rows, the longest due first. */
export async function takeDueArchives(db: Db, limit: number): Promise<QueuedArchive[]> {
  return db<QueuedArchive[]>`
    SELECT code, generation, step, url, job_id AS "jobId", polls, attempts FROM archive_queue
    WHERE next_attempt_at <= now() ORDER BY next_attempt_at, code LIMIT ${limit}`;
}

/** The row of `code`, or null when it left the queue. */
export async function getQueuedArchive(db: Db, code: string): Promise<QueuedArchive | null> {
  const rows = await db<QueuedArchive[]>`
    SELECT code, generation, step, url, job_id AS "jobId", polls, attempts FROM archive_queue
    WHERE code = ${code}`;
  return rows[0] ?? null;
}

/** Removes the row at the generation that was done. */
export async function removeQueuedArchive(db: Db, code: string, generation: number): Promise<boolean> {
  const rows = await db`
    DELETE FROM archive_queue WHERE code = ${code} AND generation = ${generation} RETURNING 1`;
  return rows.length > 0;
}

/** Moves the row to its next step (attempts reset), due after `delayMs`. */
export async function advanceQueuedArchive(
  db: Db,
  input: {
    code: string;
    generation: number;
    step: ArchiveQueueStep;
    url: string;
    jobId?: string | null;
    polls?: number;
    delayMs: number;
  },
): Promise<boolean> {
  const rows = await db`
    UPDATE archive_queue SET step = ${input.step}, url = ${input.url}, job_id = ${input.jobId ?? null},
      polls = ${input.polls ?? 0}, attempts = 0, last_error = NULL,
      next_attempt_at = now() + make_interval(secs => ${Math.max(0, input.delayMs)}::double precision / 1000)
    WHERE code = ${input.code} AND generation = ${input.generation} RETURNING 1`;
  return rows.length > 0;
}

/** Records the destination the row's capture is asked for (its step and failed attempts stay). */
export async function setQueuedArchiveUrl(
  db: Db,
  input: { code: string; generation: number; url: string },
): Promise<boolean> {
  const rows = await db`
    UPDATE archive_queue SET url = ${input.url}
    WHERE code = ${input.code} AND generation = ${input.generation} RETURNING 1`;
  return rows.length > 0;
}

/** Records a failed attempt of the row's step and when to try again. */
export async function deferQueuedArchive(
  db: Db,
  input: { code: string; generation: number; delayMs: number; error: string },
): Promise<boolean> {
  const rows = await db`
    UPDATE archive_queue SET attempts = attempts + 1, last_error = left(${input.error}, 500),
      next_attempt_at = now() + make_interval(secs => ${Math.max(0, input.delayMs)}::double precision / 1000)
    WHERE code = ${input.code} AND generation = ${input.generation} RETURNING 1`;
  return rows.length > 0;
}

export async function getArchiveQueueStats(db: Db): Promise<ArchiveQueueStats> {
  const [row] = await db<{ depth: number; due: number; nextDueInMs: number | null }[]>`
    SELECT count(*)::int AS depth, count(*) FILTER (WHERE next_attempt_at <= now())::int AS due,
           CASE WHEN count(*) = 0 THEN NULL
                ELSE greatest(0, ceil(extract(epoch FROM min(next_attempt_at) - now()) * 1000))::int
           END AS "nextDueInMs"
    FROM archive_queue`;
  return { depth: row?.depth ?? 0, due: row?.due ?? 0, nextDueInMs: row?.nextDueInMs ?? null };
}
