import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { CSRF_FIELD, isValidCsrfToken } from '../../lib/auth/sessions.ts';
import type { UiEnv } from '../ui/ui_env.ts';

/** The double-submit cookie that protects the login form (there is no session to hold a token yet). */
export const LOGIN_CSRF_COOKIE = 'lifeline_login_csrf';

/**
 * Refuses state-changing UI requests that did not come from our own pages: the Origin (or Sec-Fetch-Site)
 * must be ours, and the form must carry the session's CSRF token (or, for login, the token of the
 * double-submit cookie). Refusals are a 403 page, before any handler runs.
 */
export function csrfProtection(options: {
  appOrigin: string;
  onRejected: (c: Parameters<MiddlewareHandler<UiEnv>>[0], reason: string) => Response | Promise<Response>;
}): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const origin = c.req.header('Origin');
    const ownOrigin = new URL(c.req.url).origin;
    if (origin !== undefined && origin !== options.appOrigin && origin !== ownOrigin) {
      return options.onRejected(c, `cross-origin form post from ${origin}`);
    }
    if (origin === undefined && c.req.header('Sec-Fetch-Site') === 'cross-site') {
      return options.onRejected(c, 'cross-site form post');
    }
    const type = c.req.header('Content-Type') ?? '';
    if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type)) {
      return options.onRejected(c, 'not a form submission');
    }
    const form = await c.req.parseBody();
    // Only the login form uses the double-submit cookie; everything else needs the session's token.
    const expected =
      c.req.path === '/ui/login' ? getCookie(c, LOGIN_CSRF_COOKIE) : c.get('session')?.csrfToken;
    if (!isValidCsrfToken(expected, form[CSRF_FIELD])) {
      return options.onRejected(c, 'missing or wrong CSRF token');
    }
    await next();
  };
}
