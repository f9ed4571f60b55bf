import { fileURLToPath } from 'node:url';
import {
  bundleWorkflowCode,
  DefaultLogger,
  type LogLevel,
  NativeConnection,
  Runtime,
  type State,
  Worker,
  type WorkerInterceptors,
  type WorkerOptions,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { ActivityDeps } from '../activities/deps.ts';
import { createActivities } from '../activities/index.ts';
import type { Logger } from '../lib/shared/logger.ts';
import type { TemporalConnectionOptions } from '../lib/temporal/connection_options.ts';
import { getDrainerTaskQueue } from '../workflows/contract.ts';

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

/**
 * The Lifeline worker of a process: two SDK workers over one connection, one workflow bundle and one set of
 * activities. The main one polls the deployment's task queue (every per-post, per-link and scheduled workflow); the
 * second polls its drainer queue (getDrainerTaskQueue: the sync-queue drainer, the expiry sweeper and the webhook
 * drainer, each one per deployment and serving everyone's changes), with slots of its own, so a backlog of
 * thousands of publish workflows never holds up the one workflow that carries their later changes (ADR 0099).
 * Either failing stops both; `run()` settles when both have drained.
 */
export class LifelineWorker {
  constructor(
    readonly main: Worker,
    readonly drainers: Worker,
  ) {}

  async run(): Promise<void> {
    const stopBothOnFailure = (run: Promise<void>) =>
      run.catch((error: unknown) => {
        this.shutdown();
        throw error;
      });
    const results = await Promise.allSettled([
      stopBothOnFailure(this.main.run()),
      stopBothOnFailure(this.drainers.run()),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Starts both workers' graceful drain; a worker already stopping or stopped is left as it is. */
  shutdown(): void {
    for (const worker of [this.main, this.drainers]) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    }
  }

  /** The main worker's state, unless the drainer worker failed or stopped on its own. */
  getState(): State {
    const drainers = this.drainers.getState();
    if (drainers === 'FAILED' || (drainers === 'STOPPED' && this.main.getState() === 'RUNNING'))
      return drainers;
    return this.main.getState();
  }
}

/** The Lifeline worker (both task queues), draining gracefully on shutdown. */
export async function createLifelineWorker(options: CreateWorkerOptions): Promise<LifelineWorker> {
  // One bundle for both workers (bundling workflows/ takes ~2 s): prebuilt, or made now, with the tracing
  // interceptors compiled in when traced (the SDK ignores `workflowModules` beside a bundle).
  const workflowBundle: WorkflowBundleOption =
    options.workflowBundle ??
    (await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      ...(options.tracing ? { workflowInterceptorModules: [...TRACING_WORKFLOW_INTERCEPTORS] } : {}),
      logger: Runtime.instance().logger,
    }));
  const shared = {
    connection: options.connection,
    namespace: options.namespace,
    workflowBundle,
    ...(options.tracing ? { interceptors: options.tracing.interceptors, sinks: options.tracing.sinks } : {}),
    activities: createActivities(options.deps),
    shutdownGraceTime: '20s',
    shutdownForceTime: '60s',
  } satisfies Partial<WorkerOptions>;
  const main = await Worker.create({
    ...shared,
    taskQueue: options.taskQueue,
    // Two cores: fewer concurrent workflow tasks means less contention; activities are I/O bound.
    maxConcurrentWorkflowTaskExecutions: 20,
    maxConcurrentActivityTaskExecutions: 20,
  });
  // Three long-lived workflows, one activity at a time each: a few slots and a small cache are enough, and its
  // own workflow thread keeps its activations out of the main thread's line.
  const drainers = await Worker.create({
    ...shared,
    taskQueue: getDrainerTaskQueue(options.taskQueue),
    maxCachedWorkflows: 10,
    maxConcurrentWorkflowTaskExecutions: 4,
    maxConcurrentActivityTaskExecutions: 6,
    maxConcurrentLocalActivityExecutions: 6,
  });
  return new LifelineWorker(main, drainers);
}

/** The worker's state for the readiness check: its run state and whether both pollers poll (lower case). */
export function describeWorkerStatus(worker: LifelineWorker): { state: string; pollers: string } {
  const notPolling = [worker.main.getStatus(), worker.drainers.getStatus()]
    .flatMap((status) => [status.workflowPollerState, status.activityPollerState])
    .find((s) => s !== 'POLLING');
  return { state: worker.getState().toLowerCase(), pollers: (notPolling ?? 'POLLING').toLowerCase() };
}
