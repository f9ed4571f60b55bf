import { Hono } from 'hono';
import { z } from 'zod';
import {
  listHolds,
  listReviewItems,
  listWordPressSiteStates,
  requestBreakerDecision,
  resolveReviewInputSchema,
  resolveReviewItem,
  reviewQuerySchema,
} from '../../lib/publishing/wordpress_admin.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { createApiKeyAuth } from '../middleware/api_key_auth.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';

const idSchema = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const holdQuerySchema = z.object({ status: z.enum(['waiting', 'applied', 'discarded']).optional() });

/**
 * /api/v1/wordpress (admin scope): WordPress sites' installations and migration mode, the review list of what
 * identity matching could not decide, and the breaker's holds with their decisions (ADR 0057).
 */
export function createWordPressAdminRoutes(deps: WebDeps) {
  const requireApiKey = createApiKeyAuth(deps);
  const app = new Hono<AppEnv>();
  app.use(requireApiKey('admin'));
  const actor = (id: string | number) => `apikey:${id}`;

  app.get('/sites', async (c) => c.json(await listWordPressSiteStates(deps.sql)));

  app.get('/reviews', async (c) =>
    c.json(await listReviewItems(deps.sql, validate(reviewQuerySchema, c.req.query()))),
  );

  app.post('/reviews/:id/resolve', jsonBody(16 * 1024), async (c) => {
    const id = validate(idSchema, c.req.param('id'));
    const input = validate(resolveReviewInputSchema, await readJson(c));
    return c.json(await resolveReviewItem(deps, id, input, actor(c.get('apiKey').id)));
  });

  app.get('/breaker', async (c) => {
    const query = validate(holdQuerySchema, c.req.query());
    return c.json(await listHolds(deps.sql, query.status));
  });

  for (const action of ['approve', 'discard'] as const) {
    app.post(`/breaker/:id/${action}`, async (c) => {
      const id = validate(idSchema, c.req.param('id'));
      return c.json(await requestBreakerDecision(deps, id, action, actor(c.get('apiKey').id)), 202);
    });
  }

  return app;
}
