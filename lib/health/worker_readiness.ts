// Can this worker do its work? /readyz on the worker's health port (workers/health_server.ts). Unlike the web
// tier, a worker with no database cannot run a single activity, and one without Temporal gets no tasks: it is
// ready only while it is not draining, runs, polls both task kinds, reaches Temporal and reaches Postgres.
import { pingDatabase } from '../stores/ping_database.ts';
import type { Db } from '../stores/sql.ts';
import type { DrainState } from './drain_state.ts';
import { probe } from './probe_checks.ts';

export interface WorkerReadinessChecks {
  /** The worker's run state as the SDK names it, lower case (initialized, running, stopping, …). */
  worker: string;
  /** polling while both the workflow and the activity pollers poll; else the first that does not (failed, …). */
  pollers: string;
  temporal: 'ok' | 'down';
  postgres: 'ok' | 'down';
}

export interface WorkerReadiness {
  status: 'ready' | 'draining' | 'unavailable';
  checks?: WorkerReadinessChecks;
}

/** What the worker process exposes to the check, SDK-free (workers/health_server.ts adapts the SDK's Worker). */
export interface WorkerReadinessDeps {
  sql: Db;
  drain?: DrainState | undefined;
  /** The worker's state now; undefined before the worker exists. */
  workerStatus(): { state: string; pollers: string } | undefined;
  /** Resolves when the Temporal frontend answers a call over the worker's connection. */
  pingTemporal(): Promise<unknown>;
}

/** The rule, on checks already made. */
export function decideWorkerReadiness(checks: WorkerReadinessChecks): WorkerReadiness['status'] {
  return checks.worker === 'running' &&
    checks.pollers === 'polling' &&
    checks.temporal === 'ok' &&
    checks.postgres === 'ok'
    ? 'ready'
    : 'unavailable';
}

/** Checks Temporal and Postgres (in parallel, each within a second) and the worker's own state, then decides. */
export async function checkWorkerReadiness(deps: WorkerReadinessDeps): Promise<WorkerReadiness> {
  if (deps.drain?.draining) return { status: 'draining' };
  const [temporal, postgres] = await Promise.all([
    probe(deps.pingTemporal),
    probe(() => pingDatabase(deps.sql)),
  ]);
  const status = deps.workerStatus();
  const checks: WorkerReadinessChecks = {
    worker: status?.state ?? 'starting',
    pollers: status?.pollers ?? 'starting',
    temporal,
    postgres,
  };
  return { status: deps.drain?.draining ? 'draining' : decideWorkerReadiness(checks), checks };
}
