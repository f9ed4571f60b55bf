import { Hono } from 'hono';
import { z } from 'zod';
import {
  getRetarget,
  listChangesOfRetarget,
  listRetargets,
  requestRetarget,
  requestRetargetUndo,
  steerRetarget,
  toRetargetJson,
} from '../../lib/retarget/request_retarget.ts';
import {
  CSV_MAX_BYTES,
  retargetActionSchema,
  retargetChangesSchema,
  retargetRequestSchema,
  retargetRunListSchema,
  retargetRunSchema,
} from '../../lib/retarget/retarget_rule.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';
import { auth, problem, temporalUnavailable } from './openapi/common.ts';
import { type ApiOperation, describeRoute, named, type Parameter } from './openapi/describe_route.ts';

/**
 * A CSV rule at its cap (lib/retarget/retarget_rule.ts, CSV_MAX_BYTES) once JSON-escaped (a quote or backslash
 * doubles), with room for the rest of the body: larger bodies are refused before they are read whole.
 */
const RETARGET_BODY_MAX_BYTES = 2 * CSV_MAX_BYTES + 64 * 1024;

const changesQuerySchema = z.object({
  state: z.enum(['planned', 'invalid', 'applied', 'skipped']).optional(),
  cursor: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

const idParam: Parameter = { name: 'id', in: 'path', required: true, schema: z.string() };
const RetargetRun = named('RetargetRun', retargetRunSchema);
const RetargetAction = named('RetargetAction', retargetActionSchema);
const STEERS = {
  approve: 'Approves a planned run: it applies the plan in batches',
  pause: 'Pauses a running run after its current batch',
  resume: 'Resumes a paused run',
  cancel: 'Cancels a run (what was applied stays, and can be undone)',
} as const;

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const RETARGET_OPERATIONS = [
  describeRoute({
    method: 'post',
    path: '/retargets',
    operationId: 'requestRetarget',
    summary: 'Plans a mass retarget (prefix, regex or CSV rule) as a dry run; nothing changes until approved',
    scope: 'admin',
    body: named('RetargetRequest', retargetRequestSchema),
    responses: {
      202: { description: 'the run, planning', schema: RetargetRun },
      400: problem('malformed JSON'),
      ...auth,
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('invalid rule (each field and reason)'),
      503: temporalUnavailable,
    },
  }),
  describeRoute({
    method: 'get',
    path: '/retargets',
    operationId: 'listRetargets',
    summary: 'Mass retarget runs, newest first',
    scope: 'admin',
    responses: {
      200: { description: 'runs', schema: named('RetargetRunList', retargetRunListSchema) },
      ...auth,
    },
  }),
  describeRoute({
    method: 'get',
    path: '/retargets/{id}',
    operationId: 'getRetarget',
    summary: 'A run: status, the dry run count and sample, progress by state',
    scope: 'admin',
    parameters: [idParam],
    responses: {
      200: { description: 'the run', schema: RetargetRun },
      ...auth,
      404: problem('no such run'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/retargets/{id}/changes',
    operationId: 'listRetargetChanges',
    summary: 'A page of the run’s planned (or invalid, applied, skipped) changes: before → after',
    scope: 'admin',
    parameters: [idParam],
    query: changesQuerySchema,
    responses: {
      200: { description: 'changes by code', schema: named('RetargetChanges', retargetChangesSchema) },
      ...auth,
      404: problem('no such run'),
      422: problem('bad filter'),
    },
  }),
  ...(Object.keys(STEERS) as (keyof typeof STEERS)[]).map(
    (action): ApiOperation =>
      describeRoute({
        method: 'post',
        path: `/retargets/{id}/${action}`,
        operationId: `${action}Retarget`,
        summary: STEERS[action],
        scope: 'admin',
        parameters: [idParam],
        responses: {
          202: { description: 'the run was told', schema: RetargetAction },
          ...auth,
          404: problem('no such run'),
          409: problem('not allowed in the run’s status'),
          503: temporalUnavailable,
        },
      }),
  ),
  describeRoute({
    method: 'post',
    path: '/retargets/{id}/undo',
    operationId: 'undoRetarget',
    summary: 'Plans a run that puts back every target the run changed (a dry run, then approval)',
    scope: 'admin',
    parameters: [idParam],
    responses: {
      202: { description: 'the undo run, planning', schema: RetargetRun },
      ...auth,
      404: problem('no such run'),
      409: problem('the run is still going, is an undo, or already has one'),
      503: temporalUnavailable,
    },
  }),
];

/**
 * /api/v1/retargets (admin scope): mass retargets. POST plans a rule as a dry run (202; its count and sample
 * appear on the run), then approve / pause / resume / cancel steer it, and undo plans the reverse of a run.
 */
export function createRetargetRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  const actor = (id: string | number) => `apikey:${id}`;

  app.post('/', jsonBody(RETARGET_BODY_MAX_BYTES), async (c) => {
    const input = validate(retargetRequestSchema, await readJson(c));
    const run = await requestRetarget(deps, input, actor(c.get('apiKey').id));
    return c.json(toRetargetJson(run), 202);
  });

  app.get('/', async (c) => c.json({ items: (await listRetargets(deps.sql)).map((r) => toRetargetJson(r)) }));

  app.get('/:id', async (c) => {
    const run = await getRetarget(deps.sql, c.req.param('id'));
    const live = ['planning', 'planned', 'running', 'paused'].includes(run.status)
      ? await deps.adoption.describeRetarget(run.id).catch(() => null)
      : null;
    return c.json({ ...toRetargetJson(run), ...(live ? { workflow: live } : {}) });
  });

  app.get('/:id/changes', async (c) => {
    const query = validate(changesQuerySchema, c.req.query());
    await getRetarget(deps.sql, c.req.param('id'));
    return c.json(await listChangesOfRetarget(deps.sql, c.req.param('id'), query));
  });

  for (const action of Object.keys(STEERS) as (keyof typeof STEERS)[]) {
    app.post(`/:id/${action}`, async (c) => {
      const run = await steerRetarget(deps, c.req.param('id'), action, actor(c.get('apiKey').id));
      return c.json({ id: run.id, workflowId: run.workflowId, action }, 202);
    });
  }

  app.post('/:id/undo', async (c) => {
    const run = await requestRetargetUndo(deps, c.req.param('id'), actor(c.get('apiKey').id));
    return c.json(toRetargetJson(run), 202);
  });

  return app;
}
