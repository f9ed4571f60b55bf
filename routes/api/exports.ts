import { Hono } from 'hono';
import {
  clicksExportQuerySchema,
  exportClicksCsv,
  getClicksCsvFileName,
} from '../../lib/clicks/export_clicks.ts';
import { resolveStatsRange } from '../../lib/clicks/link_stats.ts';
import { exportLinksCsv, getLinksCsvFileName, linkExportQuerySchema } from '../../lib/links/export_links.ts';
import { getLinkRowOrThrow } from '../../lib/links/get_link.ts';
import { toCsvHeaders } from '../../lib/shared/csv.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { createApiKeyAuth } from '../middleware/api_key_auth.ts';

/** /api/v1/links.csv and /api/v1/links/{code}/clicks.csv: CSV for people (spreadsheets), docs/API.md. */
export function createExportRoutes(deps: WebDeps) {
  const requireApiKey = createApiKeyAuth(deps);
  const app = new Hono<AppEnv>();

  app.get('/links.csv', requireApiKey('links:read'), (c) => {
    const query = validate(linkExportQuerySchema, c.req.query());
    const body = exportLinksCsv(deps.sql, query, { shortBaseUrl: deps.config.shortBaseUrl });
    return c.body(body, 200, toCsvHeaders(getLinksCsvFileName()));
  });

  app.get('/links/:code/clicks.csv', requireApiKey('links:read'), async (c) => {
    const code = c.req.param('code');
    await getLinkRowOrThrow(deps.sql, code);
    const { by, ...window } = validate(clicksExportQuerySchema, c.req.query());
    const range = resolveStatsRange(window);
    const csv = await exportClicksCsv(deps.sql, code, range, by, deps.vendorClicks);
    return c.body(csv, 200, toCsvHeaders(getClicksCsvFileName(code, by, range)));
  });

  return app;
}
