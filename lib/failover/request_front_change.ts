import type { Config } from '../shared/config.ts';
import { ConflictError, ValidationError } from '../shared/errors.ts';
import { DEFAULT_DOMAIN } from '../shared/link_key.ts';
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
  deps: {
    sql: Sql;
    ops: OpsGateway;
    config: Pick<Config, 'bitly' | 'lifecycle'> & Partial<Pick<Config, 'bitlyDomains'>>;
  },
  input: { to: Front; drill: boolean; requestedBy: string; emergency?: boolean; domain?: string },
): Promise<{ workflowId: string; kind: string }> {
  const domain = input.domain ?? DEFAULT_DOMAIN;
  if (input.to === 'bitly' && !deps.config.bitly) {
    throw new ValidationError([{ path: 'to', message: 'Bitly is not configured (BITLY_TOKEN)' }]);
  }
  if (input.to === 'bitly' && domain !== DEFAULT_DOMAIN && !deps.config.bitlyDomains?.has(domain)) {
    // A short domain without a Bitly domain of its own keeps its links off Bitly: Bitly cannot answer it.
    throw new ValidationError([
      { path: 'domain', message: `${domain} has no Bitly domain (BITLY_DOMAINS): Bitly cannot front it` },
    ]);
  }
  if (!input.drill && (await getActiveFront(deps.sql, domain)).active === input.to) {
    throw new ConflictError(`${input.to} is already the active front${frontOf(domain)}.`, [
      { path: 'to', message: 'is already active' },
    ]);
  }
  const kind = input.drill ? 'drill' : input.to === 'inhouse' ? 'failover' : 'failback';
  const workflowId = frontChangeWorkflowId(kind, input.to, domain, new Date().toISOString());
  await reserve(deps, { kind, workflowId, requestedBy: input.requestedBy, to: input.to, domain });
  try {
    await deps.ops.startFrontChange(workflowId, {
      to: input.to,
      ...(domain === DEFAULT_DOMAIN ? {} : { domain }),
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

const frontOf = (domain: string) => (domain === DEFAULT_DOMAIN ? '' : ` of ${domain}`);

/**
 * A front change's workflow ID: `{kind}:{to}:{time}` on the default short domain (as before fronts were per
 * domain), `{kind}:{to}:{domain}:{time}` on another, so Temporal and ops_runs name the domain.
 */
export function frontChangeWorkflowId(kind: string, to: Front, domain: string, time: string): string {
  return domain === DEFAULT_DOMAIN ? `${kind}:${to}:${time}` : `${kind}:${to}:${domain}:${time}`;
}

/** The report fields of a front change's ops_runs row: `domain` only for a domain other than the default. */
export function frontRunReport(run: {
  to: Front;
  requestedBy: string;
  domain?: string;
}): Record<string, string> {
  return {
    to: run.to,
    requestedBy: run.requestedBy,
    ...(run.domain && run.domain !== DEFAULT_DOMAIN ? { domain: run.domain } : {}),
  };
}

async function reserve(
  deps: { sql: Sql; ops: OpsGateway },
  run: {
    kind: (typeof FRONT_CHANGE_KINDS)[number];
    workflowId: string;
    requestedBy: string;
    to: Front;
    domain: string;
  },
): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await insertOpsRun(deps.sql, {
        kind: run.kind,
        workflowId: run.workflowId,
        report: frontRunReport(run),
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

/** The stored domain a front change's ops_runs row names ('' for the default short domain). */
export function frontRunDomain(run: Pick<OpsRunRow, 'report'>): string {
  const domain = (run.report as { domain?: unknown } | null)?.domain;
  return typeof domain === 'string' ? domain : DEFAULT_DOMAIN;
}

/** The latest finished drill of a short domain (default: the default's), for GET /ops/front. */
export async function getLastDrill(sql: Sql, domain: string = DEFAULT_DOMAIN): Promise<OpsRunRow | null> {
  const runs = await listOpsRuns(sql, { kind: 'drill', limit: 50 });
  return runs.find((r) => r.status !== 'running' && frontRunDomain(r) === domain) ?? null;
}
