// Archived copies of destinations made in bulk (ADR 0076): the API's batches, the archive backfill, mass
// retargets and WordPress publishes write their links into archive_queue in the transaction that makes them;
// one drainer per task queue (workflows/archive_queue.ts) takes the due rows and moves each one step at a time —
// decide (our own hosts and copies already kept are skipped), ask Save Page Now or look the closest snapshot up,
// poll a capture — pacing what it asks of the Archive at ARCHIVE_RATE. The Archive's 429s and outages are
// recorded on the row and retried by the drainer after Retry-After or a backoff, never by a reader's request;
// a row leaves the queue only once its copy is recorded (or given up after the retries, the copy kept so far).
import { PermanentFailure, TransientFailure } from '../shared/errors.ts';
import {
  advanceQueuedArchive,
  deferQueuedArchive,
  enqueueArchiveCopies,
  getArchiveQueueStats,
  getQueuedArchive,
  type QueuedArchive,
  removeQueuedArchive,
  setQueuedArchiveUrl,
  takeDueArchives,
} from '../stores/archive_queue_store.ts';
import type { Db } from '../stores/sql.ts';
import type { ArchiveDeps } from './archive_deps.ts';
import {
  beginDestinationArchive,
  checkArchiveSave,
  findArchiveSnapshot,
  recordArchiveFailed,
  requestArchiveSave,
} from './archive_destination.ts';

/** Failed attempts of one step (429s, outages) before the drainer moves on: to the lookup, or gives up. */
export const ARCHIVE_STEP_ATTEMPTS = 8;
/** A capture is polled after 1 s, then twice as long each time up to a minute: about half an hour in all. */
const POLL_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000, ...Array<number>(28).fill(60_000)];
/** The first wait after an outage, doubled per failed attempt of the step, at most MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 5_000;
const MAX_BACKOFF_MS = 15 * 60_000;

/**
 * Queues the new destinations of `codes` for an archived copy, in the caller's transaction: nothing with
 * ARCHIVE_MODE=off. Our own hosts are queued like any other and skipped by the drainer, which knows them.
 */
export async function queueArchiveCopies(
  tx: Db,
  settings: { archiveCopies?: boolean | undefined },
  codes: readonly string[],
  reason: string,
): Promise<void> {
  if (!settings.archiveCopies || codes.length === 0) return;
  await enqueueArchiveCopies(tx, codes, reason);
}

export interface ArchiveBatch {
  codes: string[];
  /** Milliseconds until the first waiting row is due; null: the queue is empty. */
  nextDueInMs: number | null;
  /** The pause after each request to the Archive (60 s / ARCHIVE_RATE). */
  intervalMs: number;
}

/** The next due codes (their step is read again by each step: a retry takes the row as it is then). */
export async function takeArchiveBatch(deps: ArchiveDeps, input: { limit: number }): Promise<ArchiveBatch> {
  const due = await takeDueArchives(deps.sql, input.limit);
  const intervalMs = Math.ceil(60_000 / deps.archive.ratePerMinute);
  if (due.length > 0) return { codes: due.map((r) => r.code), nextDueInMs: 0, intervalMs };
  const stats = await getArchiveQueueStats(deps.sql);
  return { codes: [], nextDueInMs: stats.nextDueInMs, intervalMs };
}

export type ArchiveStepOutcome =
  | 'gone'
  | 'skipped'
  | 'requested'
  | 'pending'
  | 'saved'
  | 'found'
  | 'missing'
  | 'failed'
  | 'deferred';

export interface ArchiveStepResult {
  outcome: ArchiveStepOutcome;
  /** A request was made to the Archive that ARCHIVE_RATE paces (a capture or a lookup; polls are not). */
  asked: boolean;
  /** The Archive asked the whole queue to wait (a 429's Retry-After) or is failing: the drainer pauses. */
  pauseMs?: number;
}

/** How long a failed step waits: a 429's Retry-After, else a backoff doubling per attempt. */
function retryDelayMs(error: TransientFailure, attempts: number): number {
  if (error.retryAfterMs !== undefined) return error.retryAfterMs;
  return Math.min(FIRST_BACKOFF_MS * 2 ** attempts, MAX_BACKOFF_MS);
}

/**
 * Moves one queued destination one step. A transient failure of the Archive is recorded on the row (due again
 * after its wait) and returned as a pause for the whole queue; after ARCHIVE_STEP_ATTEMPTS a capture falls back
 * to the lookup, and a lookup gives up (the copy kept so far stays). A permanent refusal (keys, a URL the
 * Archive will not take) skips to the lookup, or gives up.
 */
export async function archiveQueuedStep(
  deps: ArchiveDeps,
  input: { code: string },
): Promise<ArchiveStepResult> {
  const row = await getQueuedArchive(deps.sql, input.code);
  if (!row) return { outcome: 'gone', asked: false };
  try {
    return await runStep(deps, row);
  } catch (error) {
    if (!(error instanceof TransientFailure || error instanceof PermanentFailure)) throw error;
    // The row as the step left it (a capture that fell back to the lookup failed as a lookup).
    const now = await getQueuedArchive(deps.sql, input.code);
    if (!now || now.generation !== row.generation) return { outcome: 'deferred', asked: true };
    if (error instanceof TransientFailure) return deferOrGiveUp(deps, now, error);
    return afterRefusal(deps, now, error);
  }
}

async function runStep(deps: ArchiveDeps, row: QueuedArchive): Promise<ArchiveStepResult> {
  const { code, generation } = row;
  if (row.step === 'begin') {
    const plan = await beginDestinationArchive(deps, { code });
    if (plan.action === 'skip') {
      await removeQueuedArchive(deps.sql, code, generation);
      return { outcome: 'skipped', asked: false };
    }
    if (plan.action === 'lookup') {
      await advanceQueuedArchive(deps.sql, { code, generation, step: 'lookup', url: plan.url, delayMs: 0 });
      return lookup(deps, { ...row, step: 'lookup', url: plan.url });
    }
    // The URL is on the row before the request (its failed attempts kept): a refusal can fall back to the lookup.
    await setQueuedArchiveUrl(deps.sql, { code, generation, url: plan.url });
    const { jobId } = await requestArchiveSave(deps, { code, url: plan.url });
    await advanceQueuedArchive(deps.sql, {
      code,
      generation,
      step: 'poll',
      url: plan.url,
      jobId,
      delayMs: POLL_DELAYS_MS[0]!,
    });
    return { outcome: 'requested', asked: true };
  }
  if (row.step === 'poll' && row.url && row.jobId) {
    const status = await checkArchiveSave(deps, { code, url: row.url, jobId: row.jobId });
    if (status.state === 'saved') {
      await removeQueuedArchive(deps.sql, code, generation);
      return { outcome: 'saved', asked: false };
    }
    const polls = row.polls + 1;
    if (status.state === 'pending' && polls < POLL_DELAYS_MS.length) {
      await advanceQueuedArchive(deps.sql, {
        code,
        generation,
        step: 'poll',
        url: row.url,
        jobId: row.jobId,
        polls,
        delayMs: POLL_DELAYS_MS[polls]!,
      });
      return { outcome: 'pending', asked: false };
    }
    // The capture failed, or never ended: the closest existing snapshot instead.
    await advanceQueuedArchive(deps.sql, { code, generation, step: 'lookup', url: row.url, delayMs: 0 });
    return { outcome: 'deferred', asked: false };
  }
  return lookup(deps, row);
}

async function lookup(deps: ArchiveDeps, row: QueuedArchive): Promise<ArchiveStepResult> {
  if (!row.url) {
    // Only a step that met the destination writes its URL; a row without one has nothing to look up.
    await removeQueuedArchive(deps.sql, row.code, row.generation);
    return { outcome: 'failed', asked: false };
  }
  const found = await findArchiveSnapshot(deps, { code: row.code, url: row.url });
  await removeQueuedArchive(deps.sql, row.code, row.generation);
  return { outcome: found.state, asked: true };
}

async function deferOrGiveUp(
  deps: ArchiveDeps,
  row: QueuedArchive,
  error: TransientFailure,
): Promise<ArchiveStepResult> {
  const delayMs = retryDelayMs(error, row.attempts);
  const asked = row.step !== 'poll';
  if (row.attempts + 1 < ARCHIVE_STEP_ATTEMPTS) {
    await deferQueuedArchive(deps.sql, {
      code: row.code,
      generation: row.generation,
      delayMs,
      error: error.message,
    });
    return { outcome: 'deferred', asked, pauseMs: delayMs };
  }
  deps.logger.warn(
    { code: row.code, step: row.step, attempts: row.attempts + 1, err: error.message },
    'the Archive kept failing for a queued destination; moving on',
  );
  return afterRefusal(deps, row, error, { asked, pauseMs: delayMs });
}

/** A step that cannot succeed: a capture falls back to the lookup; a lookup gives up. */
async function afterRefusal(
  deps: ArchiveDeps,
  row: QueuedArchive,
  error: Error,
  result: { asked: boolean; pauseMs?: number } = { asked: row.step !== 'poll' },
): Promise<ArchiveStepResult> {
  if (row.url && row.step !== 'lookup' && (error as PermanentFailure).kind !== 'ArchiveOff') {
    await advanceQueuedArchive(deps.sql, {
      code: row.code,
      generation: row.generation,
      step: 'lookup',
      url: row.url,
      delayMs: 0,
    });
    return { outcome: 'deferred', ...result };
  }
  if (row.url) await recordArchiveFailed(deps, { code: row.code, url: row.url });
  await removeQueuedArchive(deps.sql, row.code, row.generation);
  deps.logger.info({ code: row.code, err: error.message }, 'no archived copy for a queued destination');
  return { outcome: 'failed', ...result };
}
