import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { h, type VNode } from 'preact';
import { ErrorPage } from '../../components/ErrorPage.tsx';
import { getSessionCookieName, loadSession } from '../../lib/auth/sessions.ts';
import { pickLocale } from '../../lib/i18n/locales.ts';
import { createI18n } from '../../lib/i18n/translator.ts';
import { toTimeZone } from '../../lib/ui/time_zone.ts';
import type { WebDeps } from '../app_env.ts';
import { renderPage } from '../ui/render_page.ts';
import type { UiEnv } from '../ui/ui_env.ts';

/**
 * Loads the signed-in user (if any), the reader's time zone and the UI language (the user's setting, then
 * the browser's Accept-Language, then English) for every UI request.
 */
export function uiSession(deps: Pick<WebDeps, 'sql' | 'config'>): MiddlewareHandler<UiEnv> {
  const cookieName = getSessionCookieName(deps.config.appBaseUrl.startsWith('https:'));
  return async (c, next) => {
    const session = await loadSession(deps.sql, getCookie(c, cookieName));
    const timeZone = toTimeZone(getCookie(c, 'lifeline_tz'));
    c.set('session', session);
    c.set('timeZone', timeZone);
    c.set('i18n', createI18n(pickLocale(session?.user.locale, c.req.header('Accept-Language')), timeZone));
    await next();
  };
}

/** Sends anyone not signed in to the login page (and back here afterwards); `admin` also needs the role. */
export function requireUser(role?: 'admin'): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    const session = c.get('session');
    if (!session) {
      const back =
        c.req.method === 'GET' ? `?next=${encodeURIComponent(c.req.path + new URL(c.req.url).search)}` : '';
      return c.redirect(`/ui/login${back}`, 303);
    }
    if (role === 'admin' && session.user.role !== 'admin') {
      const { t } = c.get('i18n');
      return renderPage(
        c,
        h(ErrorPage, { title: t('error.forbidden.title'), message: t('error.forbidden.message') }) as VNode,
        403,
      );
    }
    await next();
  };
}
