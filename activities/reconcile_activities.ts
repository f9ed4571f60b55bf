import { reconcileBitlyPages, reconcileMissingOnBitly } from '../lib/reconcile/reconcile_bitly.ts';
import { reconcileExpiryTimers } from '../lib/reconcile/reconcile_expiry_timers.ts';
import {
  forgetReconcileRun,
  type ReconcileDeps,
  type ReconcileStepInput,
  summarizeReconcileRun,
} from '../lib/reconcile/reconcile_run.ts';
import { reconcileServingStore } from '../lib/reconcile/reconcile_serving_store.ts';
import type { ActivityDeps } from './deps.ts';
import { currentSignals, currentTaskContext, runStep } from './task_context.ts';

/** Reconciliation (lib/reconcile): Postgres ↔ Bitly (with import) ↔ the serving store ↔ the expiry sweeper. */
export function createReconcileActivities(deps: ActivityDeps) {
  const reconcileDeps = (): ReconcileDeps => ({ ...deps, sweeper: currentSignals().sweeper });
  return {
    reconcileBitlyPages: (input: ReconcileStepInput) =>
      runStep(() => reconcileBitlyPages(reconcileDeps(), input, currentTaskContext())),
    reconcileMissingOnBitly: (input: ReconcileStepInput) =>
      runStep(() => reconcileMissingOnBitly(reconcileDeps(), input, currentTaskContext())),
    reconcileServingStore: (input: ReconcileStepInput) =>
      runStep(() => reconcileServingStore(reconcileDeps(), input, currentTaskContext())),
    reconcileExpiryTimers: (input: ReconcileStepInput) =>
      runStep(() => reconcileExpiryTimers(reconcileDeps(), input, currentTaskContext())),
    summarizeReconcileRun: (input: { runId: string }) => summarizeReconcileRun(deps, input.runId),
    forgetReconcileRun: (input: { runId: string }) => forgetReconcileRun(deps, input.runId),
  };
}
