import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { h, type VNode } from 'preact';
import { ErrorPage } from '../../components/ErrorPage.tsx';
import { roleCan, scopesCan } from '../../lib/auth/permissions.ts';
import { ForbiddenError } from '../../lib/shared/errors.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';
import { findRouteRule, type RouteRule } from '../route_rules.ts';
import { renderPage } from '../ui/render_page.ts';
import type { UiEnv } from '../ui/ui_env.ts';
import { createApiKeyAuthenticator } from './api_key_auth.ts';

/** Where an admin without a second factor is sent while REQUIRE_MFA_FOR_ADMINS is on. */
export const MFA_ENROL_PATH = '/ui/account/security';

type Matched = { rule: RouteRule | undefined; route: string } | null;

/**
 * The route that will answer: the first matched route registered for a method (middleware is registered for
 * all methods, and so is the UI's catch-all 404 page). Null when only those match (nothing is there).
 */
function matchedRule(c: Context): Matched {
  const route = matchedRoutes(c).find((r) => r.method !== 'ALL');
  if (!route) return null;
  return { rule: findRouteRule(route.method, route.path), route: `${route.method} ${route.path}` };
}

/**
 * /api/v1: the route's rule from routes/route_rules.ts; for a permission, the API key (401 without a valid one)
 * and its scopes (403 without the permission). A route missing from the table is refused (403, logged), so a
 * route added without a rule never answers.
 */
export function authorizeApi(deps: Pick<WebDeps, 'sql' | 'logger'>): MiddlewareHandler<AppEnv> {
  const authenticate = createApiKeyAuthenticator(deps);
  return async (c, next) => {
    const matched = matchedRule(c);
    if (!matched || matched.rule === 'public') return next();
    if (matched.rule === undefined || matched.rule === 'signed-in') {
      deps.logger.error({ route: matched.route }, 'no permission rule for this API route: refused');
      throw new ForbiddenError('No permission rule covers this route.');
    }
    const key = await authenticate(c);
    if (!scopesCan(key.scopes, matched.rule)) {
      throw new ForbiddenError(`This API key lacks the "${matched.rule}" scope.`);
    }
    c.set('apiKey', key);
    await next();
  };
}

/**
 * /ui: the route's rule for the signed-in user. Not signed in (or between password and code): the sign-in page,
 * and back here afterwards. An admin without a second factor while `requireMfaForAdmins` is on: only their own
 * account pages, where they enrol. A role without the permission: a 403 page. A route missing from the table: a
 * 403 page (logged).
 */
export function authorizeUi(deps: Pick<WebDeps, 'config' | 'logger'>): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    const matched = matchedRule(c);
    if (!matched || matched.rule === 'public') return next();
    const session = c.get('session');
    if (session?.stage !== 'signed-in') {
      if (c.req.path.startsWith('/ui/api/')) {
        return c.json({ ok: false, message: c.get('i18n').t('error.signInAgain') }, 401);
      }
      if (session?.stage === 'mfa') return c.redirect('/ui/login/mfa', 303);
      const back =
        c.req.method === 'GET' ? `?next=${encodeURIComponent(c.req.path + new URL(c.req.url).search)}` : '';
      return c.redirect(`/ui/login${back}`, 303);
    }
    const { t } = c.get('i18n');
    if (matched.rule === undefined) {
      deps.logger.error({ route: matched.route }, 'no permission rule for this UI route: refused');
      return forbidden(c, t('error.forbidden.message'));
    }
    if (matched.rule === 'signed-in') return next();
    if (
      deps.config.requireMfaForAdmins &&
      session.user.role === 'admin' &&
      session.method === 'password' &&
      !session.mfaEnrolled
    ) {
      return c.redirect(`${MFA_ENROL_PATH}?required=1`, 303);
    }
    if (!roleCan(session.user.role, matched.rule)) {
      return forbidden(c, t('error.forbidden.message'));
    }
    await next();
  };
}

function forbidden(c: Context<UiEnv>, message: string) {
  const { t } = c.get('i18n');
  return renderPage(c, h(ErrorPage, { title: t('error.forbidden.title'), message }) as VNode, 403);
}
