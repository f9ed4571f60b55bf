import type { Config } from '../shared/config.ts';
import { ConflictError, ValidationError } from '../shared/errors.ts';
import {
  finishOpsRun,
  getOpsRun,
  insertOpsRun,
  listOpsRuns,
  type OpsRunRow,
} from '../stores/ops_run_store.ts';
import { isUniqueViolation, type Sql } from '../stores/sql.ts';
import type { OpsGateway } from '../temporal/ops_gateway.ts';
import { type Front, getActiveFront } from './active_front.ts';

/** The kinds of run that change (or rehearse changing) the active front; one at a time. */
export const FRONT_CHANGE_KINDS = ['failover', 'failback', 'drill'] as const;
const ONE_FRONT_CHANGE_INDEX = 'ops_runs_one_front_change';

/** The front change now running (its ops_runs row), or null. */
export async function getRunningFrontChange(sql: Sql): Promise<OpsRunRow | null> {
  const rows = await sql<{ workflowId: string }[]>`
    SELECT workflow_id AS "workflowId" FROM ops_runs
    WHERE status = 'running' AND kind IN ('failover', 'failback', 'drill') LIMIT 1`;
  return rows[0] ? getOpsRun(sql, rows[0].workflowId) : null;
}

/**
 * Starts a failover (`to: inhouse`), failback (`to: bitly`) or drill. One at a time: the ops_runs row is
 * reserved first, under a unique index, so two requests racing get one 202 and one 409. A reservation whose
 * workflow Temporal does not run (the web process died between the two steps) is closed as abandoned.
 */
export async function requestFrontChange(
  deps: { sql: Sql; ops: OpsGateway; config: Pick<Config, 'bitly' | 'lifecycle'> },
  input: { to: Front; drill: boolean; requestedBy: string; emergency?: boolean },
): Promise<{ workflowId: string; kind: string }> {
  if (input.to === 'bitly' && !deps.config.bitly) {
    throw new ValidationError([{ path: 'to', message: 'Bitly is not configured (BITLY_TOKEN)' }]);
  }
  if (!input.drill && (await getActiveFront(deps.sql)).active === input.to) {
    throw new ConflictError(`${input.to} is already the active front.`, [
      { path: 'to', message: 'is already active' },
    ]);
  }
  const kind = input.drill ? 'drill' : input.to === 'inhouse' ? 'failover' : 'failback';
  const workflowId = `${kind}:${input.to}:${new Date().toISOString()}`;
  await reserve(deps, { kind, workflowId, requestedBy: input.requestedBy, to: input.to });
  try {
    await deps.ops.startFrontChange(workflowId, {
      to: input.to,
      drill: input.drill,
      requestedBy: input.requestedBy,
      dnsTtlSeconds: deps.config.lifecycle.dnsTtlSeconds,
      loweredTtlSeconds: deps.config.lifecycle.dnsLoweredTtlSeconds,
      ...(input.emergency ? { emergency: true } : {}),
    });
  } catch (error) {
    await finishOpsRun(deps.sql, workflowId, 'failed', { error: 'the workflow could not be started' });
    throw error;
  }
  return { workflowId, kind };
}

async function reserve(
  deps: { sql: Sql; ops: OpsGateway },
  run: { kind: (typeof FRONT_CHANGE_KINDS)[number]; workflowId: string; requestedBy: string; to: Front },
): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await insertOpsRun(deps.sql, {
        kind: run.kind,
        workflowId: run.workflowId,
        report: { to: run.to, requestedBy: run.requestedBy },
      });
      return;
    } catch (error) {
      if (!isUniqueViolation(error, ONE_FRONT_CHANGE_INDEX)) throw error;
      const running = await getRunningFrontChange(deps.sql);
      if (!running) continue;
      const state = await deps.ops.describeFrontChange(running.workflowId);
      if (attempt === 0 && (state === null || state.status !== 'RUNNING')) {
        await finishOpsRun(deps.sql, running.workflowId, 'failed', {
          error: `abandoned: its workflow is ${state?.status.toLowerCase() ?? 'unknown to Temporal'}`,
        });
        continue;
      }
      throw new ConflictError(`A ${running.kind} (${running.workflowId}) is running; one at a time.`);
    }
  }
  throw new ConflictError('Another front change is starting; try again.');
}

/** The latest finished drill, for GET /ops/front. */
export async function getLastDrill(sql: Sql): Promise<OpsRunRow | null> {
  const runs = await listOpsRuns(sql, { kind: 'drill', limit: 10 });
  return runs.find((r) => r.status !== 'running') ?? null;
}
