// A backfill run after its batches: waking the sync queue for its links, and closing it with a reconciliation.
import type { BackfillReport } from '../../workflows/contract.ts';
import { kickSyncQueueIfWaiting } from '../propagation/link_sync_queue.ts';
import type { Logger } from '../shared/logger.ts';
import type { TaskContext } from '../shared/task_context.ts';
import {
  countBackfillPosts,
  countUnpropagatedPosts,
  finishBackfillRun,
  getBackfillRun,
  listUnpropagatedPosts,
  updatePostsPropagated,
} from '../stores/backfill_store.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import type { Sql } from '../stores/sql.ts';
import type { SyncQueueKicker } from '../temporal/link_sync.ts';
import type { WordPressReconcileRequester } from './accept_site_event.ts';

/** Where a run's propagation stands. */
export interface BackfillProgress {
  propagated: number;
  remaining: number;
  finalReceived: boolean;
  finished: boolean;
}

/** Posts per step of the propagation of rows written before the sync queue (one transaction each). */
const PROPAGATE_CHUNK = 500;

/**
 * Wakes the sync-queue drainer for a run's new links: the batches queued them with the links (ADR 0024), so
 * this is one signalWithStart per step, whatever the batch size; the drainer takes them to the serving store,
 * the caches and Bitly (through its rate limit) in batches. Rows a batch recorded as unpropagated (written
 * before the queue existed) are queued here first, a chunk per transaction. Idempotent and resumable.
 */
export async function propagateBackfill(
  deps: { sql: Sql; logger: Logger; queue: SyncQueueKicker },
  input: { site: string; runId: string },
  context: TaskContext,
): Promise<BackfillProgress> {
  let propagated = 0;
  for (;;) {
    const rows = await listUnpropagatedPosts(deps.sql, input.site, input.runId, PROPAGATE_CHUNK);
    if (rows.length === 0) break;
    await deps.sql.begin(async (tx) => {
      await enqueueLinkSyncs(
        tx,
        rows.map((r) => r.code),
        `backfill ${input.runId}`,
      );
      await updatePostsPropagated(
        tx,
        input.site,
        input.runId,
        rows.map((r) => r.postId),
      );
    });
    propagated += rows.length;
    context.heartbeat({ propagated });
  }
  await kickSyncQueueIfWaiting(deps, `backfill ${input.runId}`);
  // Per batch: both reads go through a key (the run's row, the partial index of unpropagated answers), so a
  // step costs the same at the millionth post as at the first (ADR 0088).
  const [run, remaining] = await Promise.all([
    getBackfillRun(deps.sql, input.site, input.runId),
    countUnpropagatedPosts(deps.sql, input.site, input.runId),
  ]);
  return {
    propagated,
    remaining,
    finalReceived: run?.finalReceived ?? false,
    finished: run?.status === 'finished',
  };
}

/**
 * Closes a run whose final batch arrived and whose links all propagated, and asks for the site's WordPress
 * reconciliation (WordPress winning heals the links the run kept, and unpublishes whatever WordPress does not
 * list as published). Idempotent.
 */
export async function finishBackfill(
  deps: { sql: Sql; logger: Logger; wordpress?: WordPressReconcileRequester | undefined },
  input: { site: string; runId: string },
): Promise<BackfillReport> {
  await finishBackfillRun(deps.sql, input.site, input.runId);
  const run = await getBackfillRun(deps.sql, input.site, input.runId);
  const counts = await countBackfillPosts(deps.sql, input.site, input.runId);
  const report: BackfillReport = {
    site: input.site,
    runId: input.runId,
    outcomes: counts.outcomes,
    received: counts.received,
    propagated: counts.received - counts.unpropagated,
    durationMs: run ? (run.finishedAt ?? new Date()).getTime() - run.startedAt.getTime() : 0,
  };
  deps.logger.info(report, 'backfill run finished');
  if (deps.wordpress) {
    try {
      await deps.wordpress.requestWordPressReconcile({
        site: input.site,
        reason: `after backfill ${input.runId}`,
      });
    } catch (error) {
      deps.logger.warn(
        { err: error, ...input },
        'could not start the WordPress reconciliation after a backfill',
      );
    }
  }
  return report;
}
