import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { getSessionCookieName, loadSession } from '../../lib/auth/sessions.ts';
import { pickLocale } from '../../lib/i18n/locales.ts';
import { createI18n } from '../../lib/i18n/translator.ts';
import { toTimeZone } from '../../lib/ui/time_zone.ts';
import type { WebDeps } from '../app_env.ts';
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
