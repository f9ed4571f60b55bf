import { fileURLToPath } from 'node:url';
import {
  DefaultLogger,
  type LogLevel,
  type NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { ActivityDeps } from '../activities/deps.ts';
import { createActivities } from '../activities/index.ts';
import type { Logger } from '../lib/shared/logger.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

let runtimeInstalled = false;

/**
 * Installs the Temporal Runtime once per process, logging through our pino logger and with signal handling
 * left to our entry points (they stop the web tier first, then drain the worker).
 */
export function installTemporalRuntime(logger: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = (logger.level === 'debug' || logger.level === 'trace' ? 'DEBUG' : 'WARN') as LogLevel;
  Runtime.install({
    shutdownSignals: [],
    logger: new DefaultLogger(level, (entry) => {
      const { error, ...rest } = (entry.meta ?? {}) as Record<string, unknown>;
      const meta = { ...rest, ...(error ? { err: error } : {}), temporal: true };
      if (entry.level === 'ERROR') logger.error(meta, entry.message);
      else if (entry.level === 'WARN') logger.warn(meta, entry.message);
      else logger.debug(meta, entry.message);
    }),
  });
}

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** A prebuilt bundle (tests, production images); otherwise workflows/ is bundled at start (~2 s). */
  workflowBundle?: WorkflowBundleOption;
}

/** The Lifeline worker: every workflow and activity on one task queue, draining gracefully on shutdown. */
export async function createLifelineWorker(options: CreateWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: WORKFLOWS_PATH }),
    activities: createActivities(options.deps),
    // Two cores: fewer concurrent workflow tasks means less contention; activities are I/O bound.
    maxConcurrentWorkflowTaskExecutions: 20,
    maxConcurrentActivityTaskExecutions: 20,
    shutdownGraceTime: '20s',
    shutdownForceTime: '60s',
  });
}
