// What the operations page shows of adopting an existing newsroom: backfill runs with their progress, the
// latest mass retargets, the sync queue their links' replicas wait in (ADR 0024), and the links past their expiry
// the sweeper has not expired yet (ADR 0091).

import { getSyncQueueOverview, type SyncQueueOverview } from '../propagation/link_sync_queue.ts';
import { countBackfillPosts, listBackfillRuns } from '../stores/backfill_store.ts';
import { getExpiryBacklog } from '../stores/link_lifecycle_store.ts';
import { listRetargetRuns, type RetargetRunRow } from '../stores/retarget_store.ts';
import type { Db } from '../stores/sql.ts';

export interface BackfillProgressView {
  site: string;
  runId: string;
  workflowId: string;
  status: 'running' | 'finished';
  /** Posts the run covers (the plugin's count when it started). */
  total: number;
  /** Posts answered so far, by outcome. */
  received: number;
  outcomes: Record<string, number>;
  /** New links still on their way to the serving store and their sync workflow. */
  unpropagated: number;
  lastBatch: number;
  finalReceived: boolean;
  startedAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export interface AdoptionOverview {
  backfills: BackfillProgressView[];
  retargets: RetargetRunRow[];
  /** Bulk changes (API batches, backfills) whose replicas are still on their way. */
  syncQueue: SyncQueueOverview;
  /** Live active links past their expires_at not expired yet by the sweeper, and the oldest one's lateness. */
  expiryBacklog: { due: number; oldestLateSeconds: number };
}

export async function getAdoptionOverview(db: Db): Promise<AdoptionOverview> {
  const [runs, retargets, syncQueue, expiryBacklog] = await Promise.all([
    listBackfillRuns(db, 5),
    listRetargetRuns(db, 5),
    getSyncQueueOverview(db),
    getExpiryBacklog(db),
  ]);
  const backfills = await Promise.all(
    runs.map(async (run) => {
      const counts = await countBackfillPosts(db, run.site, run.runId);
      return {
        site: run.site,
        runId: run.runId,
        workflowId: run.workflowId,
        status: run.status,
        total: run.total,
        received: counts.received,
        outcomes: counts.outcomes,
        unpropagated: counts.unpropagated,
        lastBatch: run.lastBatch,
        finalReceived: run.finalReceived,
        startedAt: run.startedAt,
        updatedAt: run.updatedAt,
        finishedAt: run.finishedAt,
      };
    }),
  );
  return { backfills, retargets, syncQueue, expiryBacklog };
}
