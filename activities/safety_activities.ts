import {
  type RescanStepInput,
  rescanLinks,
  scanLinkSafety,
  summarizeRescanRun,
} from '../lib/safety/rescan_links.ts';
import type { ActivityDeps } from './deps.ts';
import { currentSignals, currentTaskContext, currentWorkflowId, runStep } from './task_context.ts';

/** Safety (lib/safety/rescan_links.ts): publish-time scans and the scheduled re-scan. */
export function createSafetyActivities(deps: ActivityDeps) {
  const withSync = () => {
    const signals = currentSignals();
    return { ...deps, sync: signals.sync, queue: signals.queue };
  };
  return {
    scanLinkSafety: (input: { code: string; queueSync?: boolean }) =>
      runStep(() =>
        scanLinkSafety(withSync(), {
          code: input.code,
          runId: currentWorkflowId(),
          ...(input.queueSync ? { queueSync: true } : {}),
        }),
      ),
    rescanLinks: (input: RescanStepInput) =>
      runStep(() => rescanLinks(withSync(), input, currentTaskContext())),
    summarizeRescanRun: (input: { runId: string; startedAtMs: number; contains?: string }) =>
      summarizeRescanRun(deps, input),
  };
}
