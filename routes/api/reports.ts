import { Hono } from 'hono';
import { z } from 'zod';
import {
  getLinkReports,
  listReportQueuePage,
  REPORT_STATUSES,
  reportQueueItemSchema,
  reportQueueQuerySchema,
  resolveReports,
  resolveReportsInputSchema,
} from '../../lib/safety/moderate_reports.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { jsonBody, readJson } from '../middleware/json_body.ts';
import { auth, codeParam, problem } from './openapi/common.ts';
import { describeRoute, named } from './openapi/describe_route.ts';

const linkReportsSchema = z.object({
  code: z.string(),
  shortUrl: z.string(),
  url: z.string(),
  status: z.string(),
  safety: z.string(),
  owner: z.string(),
  reports: z.array(
    z.object({
      reason: z.string().nullable(),
      status: z.enum(REPORT_STATUSES),
      createdAt: z.string(),
      resolvedAt: z.string().optional(),
      resolvedBy: z.string().optional(),
      note: z.string().optional(),
    }),
  ),
});
const resolveReportsResultSchema = z.object({
  code: z.string(),
  action: resolveReportsInputSchema.shape.action,
  resolved: z.number().int(),
  safety: z.string(),
  status: z.string(),
});

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const REPORT_OPERATIONS = [
  describeRoute({
    method: 'get',
    path: '/reports',
    operationId: 'listReportQueue',
    summary:
      'The moderation queue: links with reader reports (open by default), reasons counted, newest first',
    scope: 'moderation',
    query: reportQueueQuerySchema,
    responses: {
      200: {
        description: 'a page of reported links',
        schema: named(
          'ReportQueue',
          z.object({ items: z.array(reportQueueItemSchema), nextCursor: z.string().nullable() }),
        ),
      },
      ...auth,
      400: problem('a cursor this server did not issue'),
      422: problem('bad status or limit'),
    },
  }),
  describeRoute({
    method: 'get',
    path: '/reports/{code}',
    operationId: 'getLinkReports',
    summary: "A link's reader reports in every state (reporters stay anonymous)",
    scope: 'moderation',
    parameters: [codeParam],
    responses: {
      200: { description: 'the reports', schema: named('LinkReports', linkReportsSchema) },
      ...auth,
      404: problem('no such link'),
    },
  }),
  describeRoute({
    method: 'post',
    path: '/reports/{code}/resolve',
    operationId: 'resolveReports',
    summary:
      'Dismiss (lift the warning), confirm (block, 451) or ignore (leave as is) a link’s reports; audited',
    scope: 'moderation',
    parameters: [codeParam],
    body: named('ResolveReportsInput', resolveReportsInputSchema),
    responses: {
      200: {
        description: 'decided; the link’s verdict now',
        schema: named('ResolveReportsResult', resolveReportsResultSchema),
      },
      400: problem('malformed JSON'),
      ...auth,
      404: problem('no such link'),
      409: problem('no reports to decide about'),
      413: problem('body too large'),
      415: problem('not JSON'),
      422: problem('unknown action'),
    },
  }),
];

/** /api/v1/reports: the moderation queue of reader reports (admin scope; docs/API_EXTENSIONS.md). */
export function createReportsRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();

  app.get('/', async (c) => {
    const query = validate(reportQueueQuerySchema, c.req.query());
    return c.json(await listReportQueuePage(deps.sql, deps.config.shortBaseUrl, query));
  });

  app.get('/:code', async (c) => {
    return c.json(await getLinkReports(deps.sql, deps.config.shortBaseUrl, c.req.param('code')));
  });

  app.post('/:code/resolve', jsonBody(4 * 1024), async (c) => {
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
