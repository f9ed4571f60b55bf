import { type Context, Hono } from 'hono';
import type { NewsroomLogoView } from '../../components/NewsroomLogoCard.tsx';
import { SettingsPage } from '../../components/SettingsPage.tsx';
import { roleCan } from '../../lib/auth/permissions.ts';
import { setUserPreferences, userPreferencesInputSchema } from '../../lib/auth/user_preferences.ts';
import { DEFAULT_LOCALE, negotiateLocale } from '../../lib/i18n/locales.ts';
import { readNewsroomLogo, removeNewsroomLogo, setNewsroomLogo } from '../../lib/links/newsroom_logo.ts';
import { AppError } from '../../lib/shared/errors.ts';
import { toFormValues } from '../../lib/ui/link_form.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

/**
 * GET/POST /ui/settings: the signed-in editor's own preferences (the UI language); for admins also the
 * newsroom's logo for print QR codes (POST /ui/settings/logo to upload, /ui/settings/logo/remove).
 */
export function createSettingsRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const browserLocale = (header: string | undefined) => negotiateLocale(header) ?? DEFAULT_LOCALE;

  const logoView = async (): Promise<NewsroomLogoView | null> => {
    const stored = await readNewsroomLogo(deps.sql);
    return stored
      ? {
          type: stored.contentType === 'image/png' ? 'PNG' : 'SVG',
          bytes: stored.bytes.byteLength,
          uploadedBy: stored.uploadedBy,
          uploadedAt: stored.uploadedAt,
          // The preview travels in the page (the UI's policy allows data: images): no route serves an uploaded
          // SVG from our origin, where it would be a document of its own.
          dataUrl: `data:${stored.contentType};base64,${Buffer.from(stored.bytes).toString('base64')}`,
        }
      : null;
  };

  const page = async (
    c: Context<UiEnv>,
    options: {
      saved?: boolean;
      error?: string;
      logoError?: string;
      logoNotice?: 'saved' | 'removed' | undefined;
    } = {},
    status: 200 | 422 = 200,
  ) => {
    const session = c.get('session')!;
    const admin = roleCan(session.user.role, 'admin');
    return renderPage(
      c,
      <SettingsPage
        session={session}
        browserLocale={browserLocale(c.req.header('Accept-Language'))}
        {...(options.saved ? { saved: true } : {})}
        {...(options.error ? { error: options.error } : {})}
        newsroomLogo={
          admin ? { logo: await logoView(), error: options.logoError, notice: options.logoNotice } : undefined
        }
      />,
      status,
    );
  };

  app.get('/', (c) => {
    const logo = c.req.query('logo');
    return page(c, {
      saved: c.req.query('saved') === '1',
      logoNotice: logo === 'saved' || logo === 'removed' ? logo : undefined,
    });
  });

  app.post('/', async (c) => {
    const session = c.get('session')!;
    const values = toFormValues(await c.req.parseBody());
    const parsed = userPreferencesInputSchema.safeParse({ locale: values.locale ?? 'browser' });
    if (!parsed.success) {
      const i18n = c.get('i18n');
      return page(c, { error: i18n.fieldSentence(i18n.t('settings.language'), 'is not a valid value') }, 422);
    }
    await setUserPreferences(deps.sql, session.user.id, parsed.data);
    // The page after the redirect speaks the new language.
    return c.redirect('/ui/settings?saved=1', 303);
  });

  app.post('/logo', async (c) => {
    const session = c.get('session')!;
    const body = await c.req.parseBody();
    const file = body.logo;
    const bytes = file instanceof File ? new Uint8Array(await file.arrayBuffer()) : new Uint8Array();
    try {
      await setNewsroomLogo(deps.sql, bytes, `user:${session.user.email}`);
    } catch (error) {
      if (!(error instanceof AppError && error.status === 422)) throw error;
      const i18n = c.get('i18n');
      const problem = error.extra.errors?.[0]?.message ?? error.message;
      return page(c, { logoError: i18n.fieldSentence(i18n.t('qr.field.logo'), problem) }, 422);
    }
    return c.redirect('/ui/settings?logo=saved#newsroom-logo', 303);
  });

  app.post('/logo/remove', async (c) => {
    await removeNewsroomLogo(deps.sql);
    return c.redirect('/ui/settings?logo=removed#newsroom-logo', 303);
  });

  return app;
}
