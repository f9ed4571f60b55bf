import { writeEscrowExport } from '../lib/escrow/run_scheduled_export.ts';
import { PermanentFailure } from '../lib/shared/errors.ts';
import { writeStaticSnapshot } from '../lib/snapshot/run_scheduled_snapshot.ts';
import type { ActivityDeps, EscrowDeps } from './deps.ts';
import { runStep, withKeepAlive } from './task_context.ts';

/**
 * How often an export heartbeats while it runs (the workflow's heartbeat timeout is 20 s), and how long it may
 * write nothing before the beats stop and it is timed out and retried.
 */
const KEEP_ALIVE_MS = 5_000;
const STALL_MS = 60_000;

/** Escrow exports and static snapshots (lib/escrow, lib/snapshot), into the worker's ESCROW_DIR and SNAPSHOT_DIR. */
export function createEscrowActivities(deps: ActivityDeps) {
  const withSettings = (): ActivityDeps & EscrowDeps => {
    if (!deps.archive) throw new PermanentFailure('escrow is not configured on this worker', 'NotConfigured');
    return { ...deps, ...deps.archive };
  };
  return {
    writeEscrowExport: (input: { workflowId: string }) =>
      runStep(() =>
        withKeepAlive(KEEP_ALIVE_MS, (context) => writeEscrowExport(withSettings(), input, context), {
          stallMs: STALL_MS,
        }),
      ),
    writeStaticSnapshot: (input: { workflowId: string }) =>
      runStep(() =>
        withKeepAlive(KEEP_ALIVE_MS, (context) => writeStaticSnapshot(withSettings(), input, context), {
          stallMs: STALL_MS,
        }),
      ),
  };
}
