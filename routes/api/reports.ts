import { Hono } from 'hono';
import {
  getLinkReports,
  listReportQueuePage,
  reportQueueQuerySchema,
  resolveReports,
  resolveReportsInputSchema,
} from '../../lib/safety/moderate_reports.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { createApiKeyAuth } from '../middleware/api_key_auth.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';

/** /api/v1/reports: the moderation queue of reader reports (admin scope; docs/API_EXTENSIONS.md). */
export function createReportsRoutes(deps: WebDeps) {
  const requireApiKey = createApiKeyAuth(deps);
  const app = new Hono<AppEnv>();

  app.get('/', requireApiKey('admin'), async (c) => {
    const query = validate(reportQueueQuerySchema, c.req.query());
    return c.json(await listReportQueuePage(deps.sql, deps.config.shortBaseUrl, query));
  });

  app.get('/:code', requireApiKey('admin'), async (c) => {
    return c.json(await getLinkReports(deps.sql, deps.config.shortBaseUrl, c.req.param('code')));
  });

  app.post('/:code/resolve', requireApiKey('admin'), jsonBody(4 * 1024), async (c) => {
    const input = validate(resolveReportsInputSchema, await readJson(c));
    const result = await resolveReports(deps, {
      code: c.req.param('code'),
      ...input,
      actor: `apikey:${c.get('apiKey').id}`,
    });
    return c.json(result);
  });

  return app;
}
