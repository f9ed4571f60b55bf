import { type ChildProcess, spawn } from 'node:child_process';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { type Harness, TEST_OUTGOING_ALLOWANCE } from './harness.ts';

/**
 * The real worker entry (workers/main.ts) in a child process on the harness's database and task queue, so a
 * test can SIGKILL it mid-work. `ready` turns true once it logs that it runs.
 */
export function startWorkerProcess(options: { h: Harness; env?: Record<string, string> }): {
  process: ChildProcess;
  ready: boolean;
} {
  const { h } = options;
  const state = { process: undefined as unknown as ChildProcess, ready: false };
  state.process = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      DATABASE_URL: h.db.url,
      TEMPORAL_ADDRESS: h.temporal.address,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      SHORT_BASE_URL: h.config.shortBaseUrl,
      BOOTSTRAP_API_KEY: h.apiKey,
      WORDPRESS_WEBHOOK_SECRET: h.webhookSecret,
      ADMIN_EMAIL: 'admin@example.test',
      ADMIN_PASSWORD: 'correct horse battery',
      LOG_LEVEL: 'info',
      // Any free port for the worker's probes and metrics: test workers run side by side.
      WORKER_HEALTH_PORT: '0',
      OUTGOING_ALLOWED_PRIVATE: TEST_OUTGOING_ALLOWANCE,
      ...options.env,
    },
  });
  state.process.stdout?.on('data', (chunk: Buffer) => {
    if (chunk.toString().includes('worker running')) state.ready = true;
  });
  state.process.stderr?.resume();
  return state;
}
