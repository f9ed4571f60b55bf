import type { ChildProcess } from 'node:child_process';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { workerNodeFlags } from '../../scripts/web_node_flags.ts';
import { harnessEntryEnv, startEntry } from './entry_process.ts';
import { type Harness, TEST_OUTGOING_ALLOWANCE } from './harness.ts';

/**
 * The real worker entry (workers/main.ts), with its Node flags, in a child process on the harness's database and
 * task queue, so a test can SIGKILL it mid-work. `ready` turns true once it logs that it runs.
 */
export function startWorkerProcess(options: {
  h: Harness;
  env?: Record<string, string>;
  /** The built entry (dist/worker.mjs through scripts/lifeline.sh, as the image runs it), not the source. */
  built?: boolean;
}): {
  process: ChildProcess;
  ready: boolean;
} {
  // The worker's Node flags as production runs it (package.json's "worker" script), less any NODE_OPTIONS names.
  const nodeOptions = options.env?.NODE_OPTIONS ?? process.env.NODE_OPTIONS ?? '';
  const nodeFlags = workerNodeFlags(ROOT).filter((flag) => !nodeOptions.includes(flag.split('=')[0]!));
  const entry = startEntry('workers/main.ts', {
    nodeFlags,
    inheritEnv: true,
    env: {
      ...harnessEntryEnv(options.h),
      // Any free port for the worker's probes and metrics: test workers run side by side.
      WORKER_HEALTH_PORT: '0',
      OUTGOING_ALLOWED_PRIVATE: TEST_OUTGOING_ALLOWANCE,
      ...options.env,
    },
    // A benchmark's worker logs for minutes: only the tail is kept.
    keepChars: 20_000,
    ...(options.built ? { built: 'worker' as const } : {}),
  });
  const state = { process: entry.child, ready: false };
  entry.waitForOutput('worker running', { timeoutMs: Number.POSITIVE_INFINITY }).then(
    () => {
      state.ready = true;
    },
    // Exited first: `ready` stays false, and the caller sees the process gone.
    () => {},
  );
  return state;
}
