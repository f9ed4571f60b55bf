import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { BulkChangeLinksInput } from './contract.ts';

const DEFAULT_BATCH_SIZE = 1_000;

const { selectBulkChange, applyBulkChangeBatch, finishBulkChangeRun } = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    maximumAttempts: 20,
    nonRetryableErrorTypes: ['BadInput'],
  },
});

/**
 * One bulk change of links, `bulk:{runId}` (lib/links/run_bulk_change.ts, ADR 0086): the selection is fixed
 * once (codes, or every link a filter matches then), then applied in batches, each one transaction with an
 * audit entry per link and the sync queue (whose drainer carries the changes to every copy). Progress lives in
 * bulk_changes. A run that cannot go on is marked failed, with what it applied kept.
 */
export async function bulkChangeLinksWorkflow(input: BulkChangeLinksInput): Promise<{ status: string }> {
  const runId = input.runId;
  const batchSize = input.batchSize ?? DEFAULT_BATCH_SIZE;
  let cursor = input.cursor ?? '';
  let more = false;
  try {
    if (!input.selected) await selectBulkChange({ runId });
    for (;;) {
      const step = await applyBulkChangeBatch({ runId, batchSize, cursor });
      cursor = step.cursor;
      if (step.done) break;
      if (workflowInfo().continueAsNewSuggested) {
        more = true;
        break;
      }
    }
  } catch (error) {
    await finishBulkChangeRun({ runId, status: 'failed' });
    throw error;
  }
  // Outside the try: continuing as new ends this run by a throw that is not a failure.
  if (more) return continueAsNew<typeof bulkChangeLinksWorkflow>({ ...input, selected: true, cursor });
  await finishBulkChangeRun({ runId, status: 'finished' });
  return { status: 'finished' };
}
