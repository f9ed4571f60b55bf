import { Hono } from 'hono';
import { renderToString } from 'preact-render-to-string';
import { StatusPage } from '../components/StatusPage.tsx';
import { isPossibleCode } from '../lib/links/link.ts';
import { decideRedirect, type RedirectDecision } from '../lib/links/redirect_policy.ts';
import type { WebDeps } from '../lib/web_deps.ts';
import type { AppEnv } from './app_env.ts';

/** One short-host request as the hot path needs it, independent of the runtime and framework serving it. */
export interface RedirectRequest {
  method: string;
  /** The single path segment after `/` (a real code is plain ASCII, so decoding never matters). */
  code: string;
  /** The raw query string without `?` ('' when none). */
  query: string;
  header(name: string): string | undefined;
}

/** The answer as plain data: the Hono route turns it into a Response, the Node fast path writes it directly. */
export interface RedirectAnswer {
  status: number;
  headers: Record<string, string>;
  /** null: no body (redirects, and every HEAD). */
  body: string | null;
}

/** What answering a redirect needs from the web tier's dependencies. */
export type RedirectDeps = Pick<WebDeps, 'resolver' | 'config' | 'metrics'>;

/** Renders a decision; HEAD gets the same status and headers without a body. */
export function toRedirectAnswer(decision: RedirectDecision, method: string): RedirectAnswer {
  const headers: Record<string, string> = {
    'Cache-Control': decision.cacheControl,
    'X-Robots-Tag': 'noindex',
    'Referrer-Policy': 'unsafe-url',
  };
  if (decision.location !== undefined) {
    headers.Location = decision.location;
    return { status: decision.status, headers, body: null };
  }
  headers['Content-Type'] = 'text/html; charset=utf-8';
  headers['Content-Security-Policy'] =
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'";
  const body = decision.page ? `<!doctype html>${renderToString(<StatusPage page={decision.page} />)}` : '';
  return { status: decision.status, headers, body: method === 'HEAD' ? null : body };
}

/** THE HOT PATH, runtime-neutral: resolve the code and answer per lib/links/redirect_policy. */
export async function answerRedirect(deps: RedirectDeps, request: RedirectRequest): Promise<RedirectAnswer> {
  const code = request.code;
  const record = isPossibleCode(code) ? await deps.resolver.resolve(code) : null;
  const decision = decideRedirect(code, record, Date.now(), deps.config.redirect);
  deps.metrics.redirects.inc({ outcome: decision.outcome });
  return toRedirectAnswer(decision, request.method);
}

/** GET|HEAD /:code on Hono (Deno, tests, and Node requests the fast path does not take). */
export function createRedirectRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  app.on(['GET', 'HEAD'], '/:code', async (c) => {
    const url = c.req.url;
    const queryAt = url.indexOf('?');
    const answer = await answerRedirect(deps, {
      method: c.req.method,
      code: c.req.param('code'),
      query: queryAt < 0 ? '' : url.slice(queryAt + 1),
      header: (name) => c.req.header(name),
    });
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  });
  return app;
}
