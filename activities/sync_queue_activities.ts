import { syncLinkBatch, takeSyncBatch } from '../lib/propagation/sync_link_batch.ts';
import type { ActivityDeps } from './deps.ts';
import { currentSignals, currentTaskContext, runStep } from './task_context.ts';

/** The sync queue's drainer (lib/propagation/sync_link_batch.ts, ADR 0024): bulk changes propagated in batches. */
export function createSyncQueueActivities(deps: ActivityDeps) {
  return {
    takeSyncBatch: (input: { limit?: number }) => runStep(() => takeSyncBatch(deps, input)),
    syncLinkBatch: (input: { codes: string[] }) =>
      runStep(() => {
        const signals = currentSignals();
        return syncLinkBatch(
          { ...deps, sync: signals.sync, sweeper: signals.sweeper },
          input,
          currentTaskContext(),
        );
      }),
  };
}
