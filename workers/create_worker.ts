import { fileURLToPath } from 'node:url';
import {
  DefaultLogger,
  type LogLevel,
  NativeConnection,
  Runtime,
  Worker,
  type WorkerInterceptors,
  type WorkerOptions,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { ActivityDeps } from '../activities/deps.ts';
import { createActivities } from '../activities/index.ts';
import type { Logger } from '../lib/shared/logger.ts';
import type { TemporalConnectionOptions } from '../lib/temporal/connection_options.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/**
 * The workflow interceptors of a traced worker (Temporal's OpenTelemetry module): bundled into the workflow code,
 * at start from source or in the build's traced bundle (ADR 0072). An untraced worker's bundle has none.
 */
export const TRACING_WORKFLOW_INTERCEPTORS = [
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
] as const;

let runtimeInstalled = false;

/**
 * Installs the Temporal Runtime once per process, logging through our pino logger and with signal handling
 * left to our entry points (they stop the web tier first, then drain the worker). With `metricsAddress`, the
 * SDK's worker and workflow metrics (`temporal_*`) are served in Prometheus text at http://<address>/metrics,
 * durations in seconds (`temporal_activity_execution_latency_bucket{le="0.5"}`); workers/main.ts binds it to
 * loopback and serves it on the worker's health port.
 */
export function installTemporalRuntime(logger: Logger, options: { metricsAddress?: string } = {}): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = (logger.level === 'debug' || logger.level === 'trace' ? 'DEBUG' : 'WARN') as LogLevel;
  Runtime.install({
    shutdownSignals: [],
    ...(options.metricsAddress
      ? {
          telemetryOptions: {
            metrics: { prometheus: { bindAddress: options.metricsAddress, useSecondsForDurations: true } },
          },
        }
      : {}),
    logger: new DefaultLogger(level, (entry) => {
      const { error, ...rest } = (entry.meta ?? {}) as Record<string, unknown>;
      const meta = { ...rest, ...(error ? { err: error } : {}), temporal: true };
      if (entry.level === 'ERROR') logger.error(meta, entry.message);
      else if (entry.level === 'WARN') logger.warn(meta, entry.message);
      else logger.debug(meta, entry.message);
    }),
  });
}

/**
 * The worker's connection to Temporal with the process's settings (address, TLS / mTLS, API key, metadata).
 * A failure names the address and the TLS mode, never a secret.
 */
export async function connectWorkerToTemporal(options: TemporalConnectionOptions): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(options.worker);
  } catch (error) {
    const { address, tls, apiKey } = options.summary;
    throw new Error(
      `The worker cannot connect to Temporal at ${address} (tls: ${tls}${apiKey ? ', API key set' : ''}): ` +
        `${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /**
   * A prebuilt bundle (tests, production images); otherwise workflows/ is bundled at start (~2 s). With `tracing`
   * it must be a traced bundle (TRACING_WORKFLOW_INTERCEPTORS inside), as the build's workflow-bundle-traced.js.
   */
  workflowBundle?: WorkflowBundleOption;
  /** Tracing's activity and client interceptors and the sink workflow spans leave by (boot/tracing.ts). */
  tracing?: { interceptors: WorkerInterceptors; sinks: NonNullable<WorkerOptions['sinks']> };
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
    ...(options.tracing
      ? {
          interceptors: {
            ...options.tracing.interceptors,
            // Bundled now only when there is no prebuilt bundle (the SDK ignores them beside one).
            ...(options.workflowBundle ? {} : { workflowModules: [...TRACING_WORKFLOW_INTERCEPTORS] }),
          },
          sinks: options.tracing.sinks,
        }
      : {}),
    activities: createActivities(options.deps),
    // Two cores: fewer concurrent workflow tasks means less contention; activities are I/O bound.
    maxConcurrentWorkflowTaskExecutions: 20,
    maxConcurrentActivityTaskExecutions: 20,
    shutdownGraceTime: '20s',
    shutdownForceTime: '60s',
  });
}

/** The worker's state for the readiness check: its run state and whether both pollers poll (lower case). */
export function describeWorkerStatus(worker: Worker): { state: string; pollers: string } {
  const status = worker.getStatus();
  const notPolling = [status.workflowPollerState, status.activityPollerState].find((s) => s !== 'POLLING');
  return { state: worker.getState().toLowerCase(), pollers: (notPolling ?? 'POLLING').toLowerCase() };
}
