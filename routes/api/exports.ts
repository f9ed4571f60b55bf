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
import { auth, codeParam, problem } from './openapi/common.ts';
import { describeRoute } from './openapi/describe_route.ts';

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const EXPORT_OPERATIONS = [
  describeRoute({
    method: 'get',
    path: '/links.csv',
    operationId: 'exportLinksCsv',
    summary:
      'Every link matching the list filters (no paging), as CSV for spreadsheets: UTF-8 with a BOM, RFC 4180, ' +
      'formula-safe, streamed',
    scope: 'links:read',
    query: linkExportQuerySchema,
    responses: {
      200: { description: 'the links', csv: true, headers: ['Content-Disposition'] },
      ...auth,
      422: problem('invalid filter'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/links/{code}/clicks.csv',
    operationId: 'exportLinkClicksCsv',
    summary:
      'Clicks of a link as CSV: by day (every kind, and Bitly’s own count beside ours when Bitly holds the ' +
      'link), by country, by referrer host, by browser family or by OS family',
    scope: 'links:read',
    parameters: [codeParam],
    query: clicksExportQuerySchema,
    responses: {
      200: { description: 'the clicks', csv: true, headers: ['Content-Disposition'] },
      ...auth,
      404: problem('no such link'),
      422: problem('invalid window or breakdown'),
    },
  }),
];

/** /api/v1/links.csv and /api/v1/links/{code}/clicks.csv: CSV for people (spreadsheets), docs/API.md. */
export function createExportRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();

  app.get('/links.csv', (c) => {
    const query = validate(linkExportQuerySchema, c.req.query());
    const body = exportLinksCsv(deps.sql, query, {
      shortBaseUrl: deps.config.shortBaseUrl,
      shortDomains: deps.config.shortDomains,
    });
    return c.body(body, 200, toCsvHeaders(getLinksCsvFileName()));
  });

  app.get('/links/:code/clicks.csv', async (c) => {
    const code = c.req.param('code');
    await getLinkRowOrThrow(deps.sql, code);
    const { by, ...window } = validate(clicksExportQuerySchema, c.req.query());
    const range = resolveStatsRange(window);
    const csv = await exportClicksCsv(deps.sql, code, range, by, deps.vendorClicks);
    return c.body(csv, 200, toCsvHeaders(getClicksCsvFileName(code, by, range)));
  });

  return app;
}
