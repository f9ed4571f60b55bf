import { Hono } from 'hono';
import { z } from 'zod';
import {
  CLICKS_CSV_DIMENSIONS,
  exportClicksCsv,
  getClicksCsvFileName,
} from '../../lib/clicks/export_clicks.ts';
import { STATS_MAX_DAYS } from '../../lib/clicks/link_stats.ts';
import { exportLinksCsv, getLinksCsvFileName, linkExportQuerySchema } from '../../lib/links/export_links.ts';
import { getLinkRowOrThrow } from '../../lib/links/get_link.ts';
import { toCsvHeaders } from '../../lib/shared/csv.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { WebDeps } from '../app_env.ts';
import type { UiEnv } from './ui_env.ts';

const DAY_MS = 86_400_000;

/** /ui/links/:code/clicks.csv query: the link page's period (`days`) and the breakdown. */
const uiClicksExportQuerySchema = z.strictObject({
  days: z.coerce.number().int().min(1).max(STATS_MAX_DAYS).default(30),
  by: z.enum(CLICKS_CSV_DIMENSIONS).default('day'),
});

/**
 * GET /ui/links.csv (the list page's filters, every matching link) and /ui/links/:code/clicks.csv (the link
 * page's period): the same exports as the API, signed in as an editor, with dates in the editor's time zone and
 * column names and words in the editor's language (the API's stay English: a contract for scripts).
 */
export function createUiExportRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  app.get('/links.csv', (c) => {
    // The list page's form sends every filter, empty ones included; those mean "any", as on the page.
    const raw = Object.fromEntries(Object.entries(c.req.query()).filter(([k]) => k !== 'cursor'));
    const query = validate(linkExportQuerySchema, raw);
    const body = exportLinksCsv(deps.sql, query, {
      shortBaseUrl: deps.config.shortBaseUrl,
      shortDomains: deps.config.shortDomains,
      timeZone: c.get('timeZone'),
      language: c.get('i18n'),
    });
    return c.body(body, 200, toCsvHeaders(getLinksCsvFileName()));
  });

  app.get('/links/:code/clicks.csv', async (c) => {
    const code = c.req.param('code');
    await getLinkRowOrThrow(deps.sql, code);
    const { days, by } = validate(uiClicksExportQuerySchema, c.req.query());
    const to = new Date();
    const range = { from: new Date(to.getTime() - days * DAY_MS), to };
    const csv = await exportClicksCsv(deps.sql, code, range, by, deps.vendorClicks, c.get('i18n'));
    return c.body(csv, 200, toCsvHeaders(getClicksCsvFileName(code, by, range)));
  });

  return app;
}
