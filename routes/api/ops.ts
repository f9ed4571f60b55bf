import { Hono } from 'hono';
import { z } from 'zod';
import { getActiveFronts } from '../../lib/failover/active_front.ts';
import {
  frontRunDomain,
  getLastDrill,
  getRunningFrontChange,
  requestFrontChange,
} from '../../lib/failover/request_front_change.ts';
import { listOpsRuns, OPS_RUN_KINDS, type OpsRun } from '../../lib/operations/ops_runs.ts';
import {
  activeFrontSchema,
  failoverInputSchema,
  opsRunListSchema,
  reconcileInputSchema,
  workflowAcceptedSchema,
} from '../../lib/operations/ops_schemas.ts';
import { ConflictError, ValidationError } from '../../lib/shared/errors.ts';
import { domainNameOf, storedDomainFromInput, storedShortDomains } from '../../lib/shared/link_key.ts';
import { parseJsonText, validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';
import { auth, problem, temporalUnavailable } from './openapi/common.ts';
import { describeRoute, named } from './openapi/describe_route.ts';

const runsQuerySchema = z.object({
  kind: z.enum(OPS_RUN_KINDS).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

/** An operations run as the API returns it. */
export function toOpsRunJson(run: OpsRun) {
  return {
    kind: run.kind,
    workflowId: run.workflowId,
    status: run.status,
    report: run.report,
    startedAt: run.startedAt.toISOString(),
    ...(run.finishedAt ? { finishedAt: run.finishedAt.toISOString() } : {}),
  };
}

/** A finished drill as GET /ops/front shows it. */
function toDrillJson(run: OpsRun) {
  const report = run.report as {
    to?: string;
    durationMs?: number;
    estimatedFailoverMs?: number;
    error?: string;
  };
  return {
    workflowId: run.workflowId,
    status: run.status,
    ...(report.to ? { to: report.to } : {}),
    startedAt: run.startedAt.toISOString(),
    ...(run.finishedAt ? { finishedAt: run.finishedAt.toISOString() } : {}),
    ...(report.durationMs !== undefined ? { durationMs: report.durationMs } : {}),
    ...(report.estimatedFailoverMs !== undefined ? { estimatedFailoverMs: report.estimatedFailoverMs } : {}),
    ...(report.error ? { error: report.error } : {}),
  };
}

const WorkflowAccepted = named('WorkflowAccepted', workflowAcceptedSchema);

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const OPS_OPERATIONS = [
  describeRoute({
    method: 'post',
    path: '/ops/rescan',
    operationId: 'startRescan',
    summary: 'Re-check every live destination now (rescan:manual:{taskQueue})',
    scope: 'admin',
    responses: {
      202: { description: 'started', schema: WorkflowAccepted },
      ...auth,
      409: problem('one is running'),
      503: temporalUnavailable,
    },
  }),
  describeRoute({
    method: 'post',
    path: '/ops/reconcile',
    operationId: 'startReconcile',
    summary:
      'Reconcile Postgres, the serving store and Bitly now (reconcile:manual:{taskQueue}); import Bitly-only links',
    scope: 'admin',
    body: named('ReconcileInput', reconcileInputSchema),
    responses: {
      202: { description: 'started', schema: WorkflowAccepted },
      400: problem('malformed JSON'),
      ...auth,
      409: problem('one is running'),
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('invalid options'),
      503: temporalUnavailable,
    },
  }),
  describeRoute({
    method: 'get',
    path: '/ops/runs',
    operationId: 'listOpsRuns',
    summary: 'Operations runs (re-scans, reconciliations, failovers, drills) and their reports, newest first',
    scope: 'admin',
    query: runsQuerySchema,
    responses: {
      200: { description: 'runs', schema: named('OpsRunList', opsRunListSchema) },
      ...auth,
      422: problem('bad filter'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/ops/front',
    operationId: 'getActiveFront',
    summary: 'Who answers each short domain, since when, its last drill, and any front change in progress',
    scope: 'admin',
    responses: {
      200: { description: 'the active front', schema: named('ActiveFront', activeFrontSchema) },
      ...auth,
    },
  }),
  describeRoute({
    method: 'post',
    path: '/ops/failover',
    operationId: 'startFailover',
    summary:
      'Fail over (to inhouse), fail back (to bitly), or drill either, for one short domain; one at a time',
    scope: 'admin',
    body: named('FailoverInput', failoverInputSchema),
    responses: {
      202: { description: 'started', schema: WorkflowAccepted },
      400: problem('malformed JSON'),
      ...auth,
      409: problem('one is running, or `to` is already the active front'),
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('invalid, or Bitly not configured'),
      503: temporalUnavailable,
    },
  }),
  describeRoute({
    method: 'post',
    path: '/ops/front/dns-changed',
    operationId: 'reportDnsChanged',
    summary: 'The operator changed the short domain’s DNS: the waiting failover continues',
    scope: 'admin',
    responses: {
      202: { description: 'the failover was told', schema: WorkflowAccepted },
      ...auth,
      409: problem('no failover is waiting for DNS'),
    },
  }),
];

/** /api/v1/ops (admin scope): re-scans, reconciliation, the active front and failover, and their reports. */
export function createOpsRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();

  // Re-checks every live destination now (the Schedule does it every SAFETY_RESCAN_INTERVAL); 409 while one runs.
  app.post('/rescan', async (c) => {
    const { workflowId } = await deps.ops.startRescan({
      trigger: 'manual',
      reason: `manual, by apikey:${c.get('apiKey').id}`,
    });
    return c.json({ workflowId }, 202);
  });

  // Reconciliation now (the Schedule runs it every RECONCILE_INTERVAL): `repair: false` only reports drift.
  app.post('/reconcile', jsonBody(4 * 1024), async (c) => {
    const text = await c.req.text();
    const input = validate(reconcileInputSchema, text.trim() === '' ? {} : parseJsonText(text));
    const { workflowId } = await deps.ops.startReconcile({
      reason: `manual, by apikey:${c.get('apiKey').id}`,
      repair: input.repair ?? true,
      importExtra: input.import ?? true,
    });
    return c.json({ workflowId }, 202);
  });

  app.get('/runs', async (c) => {
    const query = validate(runsQuerySchema, c.req.query());
    const runs = await listOpsRuns(deps.sql, {
      limit: query.limit,
      ...(query.kind ? { kind: query.kind } : {}),
    });
    return c.json({ items: runs.map(toOpsRunJson) });
  });

  // Who answers the short domain; the last drill; the front change in progress (for the UI's button).
  app.get('/front', async (c) => {
    const stored = storedShortDomains(deps.config);
    const [fronts, lastDrills, running] = await Promise.all([
      getActiveFronts(deps.sql, stored),
      Promise.all(stored.map((domain) => getLastDrill(deps.sql, domain))),
      getRunningFrontChange(deps.sql),
    ]);
    const front = fronts[0]!.front;
    const lastDrill = lastDrills[0] ?? null;
    let inProgress: Record<string, unknown> | undefined;
    if (running) {
      const state = await deps.ops.describeFrontChange(running.workflowId).catch(() => null);
      inProgress = {
        kind: running.kind,
        workflowId: running.workflowId,
        startedAt: running.startedAt.toISOString(),
        ...(state?.step ? { step: state.step } : {}),
        ...(state?.waitingForDns !== undefined ? { waitingForDns: state.waitingForDns } : {}),
        ...(state?.steps ? { steps: state.steps } : {}),
        ...(state?.ttlWaitUntilMs ? { dnsTtlWaitUntil: new Date(state.ttlWaitUntilMs).toISOString() } : {}),
        domain: domainNameOf(deps.config, frontRunDomain(running)),
      };
    }
    return c.json({
      active: front.active,
      since: front.since,
      domain: deps.config.shortDomains[0],
      domains: fronts.map(({ domain, front: f }, i) => ({
        domain: domainNameOf(deps.config, domain),
        active: f.active,
        since: f.since,
        ...(lastDrills[i] ? { lastDrill: toDrillJson(lastDrills[i]!) } : {}),
      })),
      ...(lastDrill ? { lastDrill: toDrillJson(lastDrill) } : {}),
      ...(inProgress ? { inProgress } : {}),
    });
  });

  app.post('/failover', jsonBody(4 * 1024), async (c) => {
    const input = validate(failoverInputSchema, await readJson(c));
    const domain = storedDomainFromInput(deps.config, input.domain);
    if (domain === undefined)
      throw new ValidationError([
        { path: 'domain', message: 'is not one of the short domains (SHORT_DOMAINS)' },
      ]);
    const { workflowId } = await requestFrontChange(
      { sql: deps.sql, ops: deps.ops, config: deps.config },
      {
        to: input.to,
        domain,
        drill: input.drill ?? false,
        emergency: input.emergency ?? false,
        requestedBy: `apikey:${c.get('apiKey').id}`,
      },
    );
    return c.json({ workflowId }, 202);
  });

  // The operator changed the short domain's DNS by hand (no DNS adapter): the failover continues.
  app.post('/front/dns-changed', async (c) => {
    const running = await getRunningFrontChange(deps.sql);
    const state = running ? await deps.ops.describeFrontChange(running.workflowId) : null;
    if (!running || !state?.waitingForDns)
      throw new ConflictError('No failover is waiting for a DNS change.');
    await deps.ops.signalDnsChanged(running.workflowId, `apikey:${c.get('apiKey').id}`);
    return c.json({ workflowId: running.workflowId }, 202);
  });

  return app;
}
