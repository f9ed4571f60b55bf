import { applyBulkChangeBatch, finishBulkChangeRun, selectBulkChange } from '../lib/links/run_bulk_change.ts';
import type { ActivityDeps } from './deps.ts';
import { currentSignals, runStep } from './task_context.ts';

/** Bulk changes of links (lib/links/run_bulk_change.ts); the sync queue is kicked through this worker's client. */
export function createBulkChangeActivities(deps: ActivityDeps) {
  const runDeps = () => ({ ...deps, queue: currentSignals().queue });
  return {
    selectBulkChange: (input: { runId: string }) => runStep(() => selectBulkChange(runDeps(), input)),
    applyBulkChangeBatch: (input: { runId: string; batchSize: number; cursor: string }) =>
      runStep(() => applyBulkChangeBatch(runDeps(), input)),
    finishBulkChangeRun: (input: { runId: string; status: 'finished' | 'failed' }) =>
      runStep(() => finishBulkChangeRun(runDeps(), input)),
  };
}
