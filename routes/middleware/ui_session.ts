import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { getSessionCookieName, loadSession } from '../../lib/auth/sessions.ts';
import { toTimeZone } from '../../lib/ui/time_zone.ts';
import type { WebDeps } from '../app_env.ts';
import type { UiEnv } from '../ui/ui_env.ts';

/** Loads the signed-in user (if any) and the reader's time zone for every UI request. */
export function uiSession(deps: Pick<WebDeps, 'sql' | 'config'>): MiddlewareHandler<UiEnv> {
  const cookieName = getSessionCookieName(deps.config.appBaseUrl.startsWith('https:'));
  return async (c, next) => {
    c.set('session', await loadSession(deps.sql, getCookie(c, cookieName)));
    c.set('timeZone', toTimeZone(getCookie(c, 'lifeline_tz')));
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
      return c.text('Only administrators can open this page.', 403);
    }
    await next();
  };
}
