import { writeEscrowExport } from '../lib/escrow/run_scheduled_export.ts';
import { PermanentFailure } from '../lib/shared/errors.ts';
import { writeStaticSnapshot } from '../lib/snapshot/run_scheduled_snapshot.ts';
import type { ActivityDeps, EscrowDeps } from './deps.ts';
import { currentTaskContext, runStep } from './task_context.ts';

/** Escrow exports and static snapshots (lib/escrow, lib/snapshot), into the worker's ESCROW_DIR and SNAPSHOT_DIR. */
export function createEscrowActivities(deps: ActivityDeps) {
  const withSettings = (): ActivityDeps & EscrowDeps => {
    if (!deps.archive) throw new PermanentFailure('escrow is not configured on this worker', 'NotConfigured');
    return { ...deps, ...deps.archive };
  };
  return {
    writeEscrowExport: (input: { workflowId: string }) =>
      runStep(() => writeEscrowExport(withSettings(), input, currentTaskContext())),
    writeStaticSnapshot: (input: { workflowId: string }) =>
      runStep(() => writeStaticSnapshot(withSettings(), input, currentTaskContext())),
  };
}
