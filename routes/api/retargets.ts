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
import { CSV_MAX_BYTES, retargetRequestSchema } from '../../lib/retarget/retarget_rule.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { createApiKeyAuth } from '../middleware/api_key_auth.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';

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

/**
 * /api/v1/retargets (admin scope): mass retargets. POST plans a rule as a dry run (202; its count and sample
 * appear on the run), then approve / pause / resume / cancel steer it, and undo plans the reverse of a run.
 */
export function createRetargetRoutes(deps: WebDeps) {
  const requireApiKey = createApiKeyAuth(deps);
  const app = new Hono<AppEnv>();
  app.use(requireApiKey('admin'));
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

  for (const action of ['approve', 'pause', 'resume', 'cancel'] as const) {
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
