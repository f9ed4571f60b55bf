import { type Context, Hono } from 'hono';
import { QrPrintPage, type QrPrintValues } from '../../components/QrPrintPage.tsx';
import { getLinkRowOrThrow } from '../../lib/links/get_link.ts';
import {
  LOGO_MAX_BYTES,
  printQrOptionsSchema,
  type QrLogo,
  renderPrintQr,
  sniffLogo,
} from '../../lib/links/print_qr.ts';
import { AppError, type FieldError } from '../../lib/shared/errors.ts';
import { fieldProblem } from '../../lib/shared/field_problems.ts';
import { toFieldErrors } from '../../lib/shared/validation.ts';
import { toFieldMap } from '../../lib/ui/link_form.ts';
import type { WebDeps } from '../app_env.ts';
import { getQrTarget } from './link_qr.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

const DEFAULTS: QrPrintValues = { format: 'pdf', size: '40', foreground: '#000000', background: '#ffffff' };
const FIELDS = ['format', 'size', 'foreground', 'background', 'logo'] as const;

/**
 * /ui/links/:code/qr: the print form (GET) and the code it makes (POST, multipart with an optional logo): SVG,
 * PNG or PDF at a chosen size and colours (lib/links/print_qr.ts). A refused choice shows the form again with
 * the field's problem; nothing is stored.
 */
export function createQrPrintRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  const page = async (
    c: Context<UiEnv>,
    code: string,
    values: QrPrintValues,
    errors: FieldError[],
    status: 200 | 422,
  ) => {
    const row = await getLinkRowOrThrow(deps.sql, code);
    const i18n = c.get('i18n');
    const map = toFieldMap(errors);
    return renderPage(
      c,
      <QrPrintPage
        session={c.get('session')!}
        code={row.code}
        shortUrl={`${deps.config.shortBaseUrl}/${row.code}`}
        values={values}
        errors={Object.fromEntries(
          Object.entries(map).map(([field, problem]) => [
            field,
            i18n.fieldSentence(i18n.t(`qr.field.${qrField(field)}`), problem),
          ]),
        )}
      />,
      status,
    );
  };

  app.get('/:code/qr', (c) => page(c, c.req.param('code'), DEFAULTS, [], 200));

  app.post('/:code/qr', async (c) => {
    const code = c.req.param('code');
    const row = await getLinkRowOrThrow(deps.sql, code);
    const body = await c.req.parseBody();
    const text = (k: string) => (typeof body[k] === 'string' ? (body[k] as string).trim() : '');
    const values: QrPrintValues = {
      format: text('format') || DEFAULTS.format,
      size: text('size'),
      foreground: text('foreground') || DEFAULTS.foreground,
      background: text('background') || DEFAULTS.background,
    };
    const parsed = printQrOptionsSchema.safeParse(values);
    if (!parsed.success) return page(c, code, values, toFieldErrors(parsed.error), 422);
    let logo: QrLogo | null = null;
    const file = body.logo;
    if (file instanceof File && file.size > 0) {
      if (file.size > LOGO_MAX_BYTES)
        return page(
          c,
          code,
          values,
          [{ path: 'logo', message: fieldProblem('logoTooLarge', { kib: LOGO_MAX_BYTES / 1024 }) }],
          422,
        );
      const bytes = new Uint8Array(await file.arrayBuffer());
      const type = sniffLogo(bytes);
      if (!type) return page(c, code, values, [{ path: 'logo', message: fieldProblem('logoType') }], 422);
      logo = { type, bytes };
    }
    const shortUrl = `${deps.config.shortBaseUrl}/${row.code}`;
    try {
      const out = renderPrintQr(getQrTarget(shortUrl), parsed.data, logo, shortUrl);
      const ext = parsed.data.format;
      return new Response(out.body as BodyInit, {
        headers: {
          'Content-Type': out.contentType,
          'Content-Disposition': `attachment; filename="${row.code}-qr.${ext}"`,
          'Cache-Control': 'private, no-store',
        },
      });
    } catch (error) {
      if (error instanceof AppError && error.status === 422)
        return page(c, code, values, error.extra.errors ?? [], 422);
      throw error;
    }
  });

  return app;
}

function qrField(path: string): (typeof FIELDS)[number] {
  return FIELDS.find((f) => f === path) ?? 'format';
}
