import { Hono } from 'hono';
import { SettingsPage } from '../../components/SettingsPage.tsx';
import { setUserPreferences, userPreferencesInputSchema } from '../../lib/auth/user_preferences.ts';
import { DEFAULT_LOCALE, negotiateLocale } from '../../lib/i18n/locales.ts';
import { toFormValues } from '../../lib/ui/link_form.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from './render_page.ts';
import type { UiEnv } from './ui_env.ts';

/** GET/POST /ui/settings: the signed-in editor's own preferences (the UI language). */
export function createSettingsRoutes(deps: WebDeps) {
  const app = new Hono<UiEnv>();
  const browserLocale = (header: string | undefined) => negotiateLocale(header) ?? DEFAULT_LOCALE;

  app.get('/', (c) =>
    renderPage(
      c,
      <SettingsPage
        session={c.get('session')!}
        browserLocale={browserLocale(c.req.header('Accept-Language'))}
        saved={c.req.query('saved') === '1'}
      />,
    ),
  );

  app.post('/', async (c) => {
    const session = c.get('session')!;
    const values = toFormValues(await c.req.parseBody());
    const parsed = userPreferencesInputSchema.safeParse({ locale: values.locale ?? 'browser' });
    if (!parsed.success) {
      const i18n = c.get('i18n');
      return renderPage(
        c,
        <SettingsPage
          session={session}
          browserLocale={browserLocale(c.req.header('Accept-Language'))}
          error={i18n.fieldSentence(i18n.t('settings.language'), 'is not a valid value')}
        />,
        422,
      );
    }
    await setUserPreferences(deps.sql, session.user.id, parsed.data);
    // The page after the redirect speaks the new language.
    return c.redirect('/ui/settings?saved=1', 303);
  });

  return app;
}
