import { type Context, Hono } from 'hono';
import { QrPrintPage, type QrPrintValues } from '../../components/QrPrintPage.tsx';
import { getLinkRowOrThrow } from '../../lib/links/get_link.ts';
import { renderLinkPrintQr } from '../../lib/links/link_print_qr.ts';
import {
  defaultQrLogo,
  getNewsroomQrLogo,
  type QrLogoChoice,
  resolveQrLogo,
} from '../../lib/links/newsroom_logo.ts';
import { LOGO_MAX_BYTES, printQrOptionsSchema, type QrLogo, sniffLogo } from '../../lib/links/print_qr.ts';
import { AppError, type FieldError } from '../../lib/shared/errors.ts';
import { fieldProblem } from '../../lib/shared/field_problems.ts';
import { shortUrlOfKey } from '../../lib/shared/link_key.ts';
import { toFieldErrors } from '../../lib/shared/validation.ts';
import { toFieldMap } from '../../lib/ui/link_form.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

const DEFAULTS: Omit<QrPrintValues, 'logoChoice'> = {
  format: 'pdf',
  size: '40',
  foreground: '#000000',
  background: '#ffffff',
};
const FIELDS = ['format', 'size', 'foreground', 'background', 'logo'] as const;
const LOGO_CHOICES: readonly QrLogoChoice[] = ['newsroom', 'none', 'upload'];

/**
 * /ui/links/:code/qr: the print form (GET) and the code it makes (POST, multipart): SVG, PNG or PDF at a chosen
 * size and colours (lib/links/print_qr.ts), with the newsroom's logo by default when one is stored, no logo, or a
 * logo uploaded for this code. A refused choice shows the form again with the field's problem; nothing is stored.
 */
export function createQrPrintRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();

  const page = async (
    c: Context<UiEnv>,
    code: string,
    values: QrPrintValues | null,
    errors: FieldError[],
    status: 200 | 422,
  ) => {
    const row = await getLinkRowOrThrow(deps.sql, code);
    const hasNewsroomLogo = (await getNewsroomQrLogo(deps.sql)) !== null;
    const i18n = c.get('i18n');
    const map = toFieldMap(errors);
    return renderPage(
      c,
      <QrPrintPage
        session={c.get('session')!}
        code={row.code}
        shortUrl={shortUrlOfKey(deps.config, row.code)}
        values={{
          ...(values ?? DEFAULTS),
          logoChoice: values?.logoChoice || (hasNewsroomLogo ? 'newsroom' : 'none'),
        }}
        hasNewsroomLogo={hasNewsroomLogo}
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

  app.get('/:code/qr', (c) => page(c, c.req.param('code'), null, [], 200));

  app.post('/:code/qr', async (c) => {
    const code = c.req.param('code');
    await getLinkRowOrThrow(deps.sql, code);
    const body = await c.req.parseBody();
    const text = (k: string) => (typeof body[k] === 'string' ? (body[k] as string).trim() : '');
    const file = body.logo instanceof File && body.logo.size > 0 ? body.logo : null;
    // A file chosen is the logo whatever the radio says (a form without JavaScript cannot tie the two); no choice
    // at all (a form from before the choice existed) is the default: the newsroom's logo when it fits, else none.
    const choice: QrLogoChoice | '' = file
      ? 'upload'
      : (LOGO_CHOICES.find((v) => v === text('logoChoice')) ?? '');
    const values: QrPrintValues = {
      format: text('format') || DEFAULTS.format,
      size: text('size'),
      foreground: text('foreground') || DEFAULTS.foreground,
      background: text('background') || DEFAULTS.background,
      logoChoice: choice,
    };
    const parsed = printQrOptionsSchema.safeParse({
      format: values.format,
      size: values.size,
      foreground: values.foreground,
      background: values.background,
    });
    if (!parsed.success) return page(c, code, values, toFieldErrors(parsed.error), 422);
    const refuse = (message: string) => page(c, code, values, [{ path: 'logo', message }], 422);
    try {
      let logo: QrLogo | null;
      if (choice === 'upload') {
        if (!file) return refuse(fieldProblem('logoChooseFile'));
        if (file.size > LOGO_MAX_BYTES)
          return refuse(fieldProblem('logoTooLarge', { kib: LOGO_MAX_BYTES / 1024 }));
        const bytes = new Uint8Array(await file.arrayBuffer());
        const type = sniffLogo(bytes);
        if (!type) return refuse(fieldProblem('logoType'));
        logo = { type, bytes };
      } else if (choice === '') {
        logo = await defaultQrLogo(deps.sql, parsed.data.format);
      } else {
        logo = await resolveQrLogo(deps.sql, choice);
      }
      const out = await renderLinkPrintQr({ sql: deps.sql, domains: deps.config }, code, parsed.data, logo);
      return new Response(out.body as BodyInit, {
        headers: {
          'Content-Type': out.contentType,
          'Content-Disposition': `attachment; filename="${out.fileName}"`,
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
