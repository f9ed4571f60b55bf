import { runProbe } from '../lib/prober/run_probe.ts';
import type { ActivityDeps } from './deps.ts';
import { runStep } from './task_context.ts';

/** The black-box prober (lib/prober). */
export function createProbeActivities(deps: ActivityDeps) {
  return {
    runProbe: (input: { sample?: number }) => runStep(() => runProbe(deps, input)),
  };
}
