import { Hono } from 'hono';
import { renderToString } from 'preact-render-to-string';
import { StatusPage } from '../components/StatusPage.tsx';
import { isPossibleCode } from '../lib/links/link.ts';
import { decideRedirect, type RedirectDecision } from '../lib/links/redirect_policy.ts';
import type { WebDeps } from '../lib/web_deps.ts';
import type { AppEnv } from './app_env.ts';

/** Turns a redirect decision into a Response; HEAD gets the same status and headers without a body. */
export function toRedirectResponse(decision: RedirectDecision, method: string): Response {
  const headers: Record<string, string> = {
    'Cache-Control': decision.cacheControl,
    'X-Robots-Tag': 'noindex',
    'Referrer-Policy': 'unsafe-url',
  };
  if (decision.location !== undefined) {
    headers.Location = decision.location;
    return new Response(null, { status: decision.status, headers });
  }
  headers['Content-Type'] = 'text/html; charset=utf-8';
  headers['Content-Security-Policy'] =
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'";
  const body = decision.page ? `<!doctype html>${renderToString(<StatusPage page={decision.page} />)}` : '';
  return new Response(method === 'HEAD' ? null : body, { status: decision.status, headers });
}

/** GET|HEAD /:code — THE HOT PATH: resolve the code and answer per lib/links/redirect_policy. */
export function createRedirectRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  app.on(['GET', 'HEAD'], '/:code', async (c) => {
    const code = c.req.param('code');
    const record = isPossibleCode(code) ? await deps.resolver.resolve(code) : null;
    const decision = decideRedirect(code, record, Date.now(), deps.config.redirect);
    deps.metrics.redirects.inc({ outcome: decision.outcome });
    return toRedirectResponse(decision, c.req.method);
  });
  return app;
}
