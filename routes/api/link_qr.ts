import { Hono } from 'hono';
import { z } from 'zod';
import { linkKeyOf } from '../../lib/links/get_link.ts';
import { renderLinkPrintQr } from '../../lib/links/link_print_qr.ts';
import { defaultQrLogo, resolveQrLogo } from '../../lib/links/newsroom_logo.ts';
import { printQrOptionsSchema, QR_FORMATS } from '../../lib/links/print_qr.ts';
import { AppError, ValidationError } from '../../lib/shared/errors.ts';
import { validate } from '../../lib/shared/validation.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { auth, codeParam, domainParam, problem } from './openapi/common.ts';
import { describeRoute } from './openapi/describe_route.ts';

/** The sizes a format takes when the query names none: 40 mm (SVG, PDF), 1024 px (PNG). */
const DEFAULT_SIZE = { svg: 40, pdf: 40, png: 1024 } as const;

/** GET /api/v1/links/{code}/qr's query: the UI's print options under short names, and the logo. */
export const printQrQuerySchema = z.strictObject({
  format: z.enum(QR_FORMATS).default('svg').describe('svg (default), png or pdf'),
  size: z
    .string()
    .optional()
    .describe('PNG: pixels per side (128–2048, default 1024); SVG and PDF: millimetres (10–500, default 40)'),
  fg: z.string().optional().describe('the code’s colour, #rrggbb (default #000000)'),
  bg: z.string().optional().describe('the background, #rrggbb (default #ffffff); contrast at least 4.5:1'),
  logo: z
    .enum(['none', 'newsroom'])
    .optional()
    .describe('the newsroom’s logo in the middle, or none; default: the newsroom’s when one is stored'),
  domain: z.string().max(253).optional(),
});

/** The UI's field names in a refusal become the query's. */
const QUERY_NAMES: Record<string, string> = { foreground: 'fg', background: 'bg' };
const renamed = (error: AppError): ValidationError =>
  new ValidationError(
    (error.extra.errors ?? []).map((e) => ({ ...e, path: QUERY_NAMES[e.path] ?? e.path })),
    error.message,
  );

/** The operations below, in the order of their handlers (routes/api/openapi/describe_route.ts). */
export const LINK_QR_OPERATIONS = [
  describeRoute({
    method: 'get',
    path: '/links/{code}/qr',
    operationId: 'getLinkQrCode',
    summary:
      'A QR code of the link for print: SVG, PNG or PDF at a size, in colours (dark on light, contrast ≥ 4.5:1), ' +
      'with the newsroom’s logo or none; it opens the short URL marked as a scan (?qr=1)',
    scope: 'links:read',
    parameters: [codeParam, domainParam],
    query: printQrQuerySchema.omit({ domain: true }),
    responses: {
      200: {
        description: 'the code, as a file to save',
        media: ['image/svg+xml', 'image/png', 'application/pdf'],
        headers: ['Content-Disposition'],
      },
      ...auth,
      404: problem('no such link'),
      422: problem(
        'the field named: size out of range, fg/bg not #rrggbb, contrast below 4.5:1 or light on dark, ' +
          'logo=newsroom with no logo stored (or an SVG logo for PNG or PDF), an unknown domain',
      ),
    },
  }),
];

/** /api/v1/links/{code}/qr: print QR codes for integrators, as the UI's print form makes them (ADR 0079). */
export function createLinkQrApiRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();

  app.get('/:code/qr', async (c) => {
    const query = validate(printQrQuerySchema, c.req.query());
    const key = linkKeyOf(deps.config, c.req.param('code'), query.domain);
    try {
      const options = validate(printQrOptionsSchema, {
        format: query.format,
        size: query.size ?? String(DEFAULT_SIZE[query.format]),
        foreground: query.fg ?? '#000000',
        background: query.bg ?? '#ffffff',
      });
      // Left to the default: the newsroom's logo when it goes into this format; asked for, refused when it does not.
      const logo =
        query.logo === undefined
          ? await defaultQrLogo(deps.sql, options.format)
          : await resolveQrLogo(deps.sql, query.logo);
      const out = await renderLinkPrintQr({ sql: deps.sql, domains: deps.config }, key, options, logo);
      return new Response(out.body as BodyInit, {
        headers: {
          'Content-Type': out.contentType,
          'Content-Disposition': `attachment; filename="${out.fileName}"`,
          'Cache-Control': 'private, no-store',
        },
      });
    } catch (error) {
      if (error instanceof AppError && error.status === 422 && error.extra.errors) throw renamed(error);
      throw error;
    }
  });

  return app;
}
