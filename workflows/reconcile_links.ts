import {
  CancellationScope,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { ReconcileCursor, ReconcileLinksInput, ReconcileReport } from './contract.ts';

/**
 * Bitly pages of 100 per activity call (each heartbeats). With 20 a call, the calls' own round trips through
 * Temporal were a fifth of the Bitly leg against the fake at 100,000 links (4.1-4.5 s, 3.4-3.6 s with 100).
 */
const DEFAULT_PAGES_PER_CALL = 100;
const CALLS_PER_RUN = 100;
/**
 * Links a pass over Postgres handles per activity call, per page of the budget: 50,000 at the default (the serving
 * leg counts the links it reads, the missing pass those it finds Bitly lacks), seconds of work that heartbeat every
 * chunk of 500. At 1,000 a call the calls' round trips through Temporal took longer than the reading, and the
 * missing pass analyzed the run's marks at every call (measured: the serving check at 100,000 links 8.8 s, 1.7 s
 * with 50,000 a call; the missing pass 4.6-4.9 s, 0.9-1.0 s).
 */
const SCAN_LINKS_PER_PAGE = 500;
/** Overdue links the expiry leg names per call, per page of the budget (1,000 at the default). */
const OVERDUE_PER_PAGE = 10;

const {
  reconcileBitlyPages,
  reconcileMissingOnBitly,
  reconcileServingStore,
  reconcileExpiryTimers,
  reconcileWordPressPosts,
} = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  // A worker that dies mid-page is noticed within this; its successor resumes from the last heartbeat.
  heartbeatTimeout: '20s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '5m' },
});
const { recordOpsRunStarted, recordOpsRunFinished, summarizeReconcileRun, forgetReconcileRun } =
  proxyActivities<Activities>({
    startToCloseTimeout: '1m',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
  });

/**
 * Reconciliation: Postgres ↔ Bitly ↔ the serving store, Postgres the tie-breaker. Pages through the group's
 * bitlinks (stale copies re-synced, collisions flagged, Bitly-only links imported under their own
 * back-halves), then through the active links Bitly lacks (created there), then through every link's
 * serving record (rewritten when missing or stale), then through links with an expiry (a lost durable timer
 * is re-armed; one past its date fires at once), then through every known WordPress site's signed listing
 * (post links repaired with WordPress winning; lib/reconcile/reconcile_wordpress.ts). Activity calls heartbeat their cursor; the run
 * continues as new every 100 calls, so an import of any size is resumable. Counts land in ops_runs
 * (kind `reconcile`). IDs: the Schedule's `reconcile:{taskQueue}-…`, `reconcile:manual:{taskQueue}`, or a failover's
 * preflight `{failoverId}:reconcile`.
 */
export async function reconcileLinksWorkflow(input: ReconcileLinksInput = {}): Promise<ReconcileReport> {
  const { workflowId } = workflowInfo();
  const repair = input.repair ?? true;
  const startedAtMs = input.startedAtMs ?? Date.now();
  let position: ReconcileCursor = input.position ?? { phase: 'bitly', cursor: null };
  let read = input.read ?? 0;
  if (input.startedAtMs === undefined) {
    await recordOpsRunStarted({
      kind: 'reconcile',
      workflowId,
      report: { reason: input.reason ?? 'schedule', repair },
    });
  }
  const pages = input.pagesPerCall ?? DEFAULT_PAGES_PER_CALL;
  try {
    for (let calls = 0; position.phase !== 'done'; calls++) {
      if (calls >= (input.callsPerRun ?? CALLS_PER_RUN) || workflowInfo().continueAsNewSuggested) {
        break;
      }
      const step = {
        runId: workflowId,
        startedAtMs,
        position,
        repair,
        importExtra: input.importExtra ?? true,
        budget:
          position.phase === 'bitly'
            ? pages
            : position.phase === 'missing' || position.phase === 'serving'
              ? pages * SCAN_LINKS_PER_PAGE
              : pages * OVERDUE_PER_PAGE,
      };
      const result =
        position.phase === 'bitly'
          ? await reconcileBitlyPages(step)
          : position.phase === 'missing'
            ? await reconcileMissingOnBitly(step)
            : position.phase === 'serving'
              ? await reconcileServingStore(step)
              : position.phase === 'wordpress'
                ? await reconcileWordPressPosts(step)
                : await reconcileExpiryTimers(step);
      position = result.position;
      read += result.read;
    }
  } catch (error) {
    await CancellationScope.nonCancellable(async () => {
      await recordOpsRunFinished({
        workflowId,
        status: isCancellation(error) ? 'cancelled' : 'failed',
        report: { read, error: error instanceof Error ? error.message : String(error) },
      });
      await forgetReconcileRun({ runId: workflowId });
    });
    throw error;
  }
  if (position.phase !== 'done') {
    await continueAsNew<typeof reconcileLinksWorkflow>({ ...input, startedAtMs, position, read });
  }
  const summary = await summarizeReconcileRun({ runId: workflowId });
  const durationMs = Date.now() - startedAtMs;
  const report: ReconcileReport = {
    ...summary,
    repair,
    read,
    durationMs,
    linksPerSecond: durationMs > 0 ? Math.round((read * 1000) / durationMs) : 0,
  };
  await recordOpsRunFinished({ workflowId, status: 'succeeded', report });
  await forgetReconcileRun({ runId: workflowId });
  log.info('reconciliation finished', { ...report });
  return report;
}
