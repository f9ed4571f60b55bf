import { Hono } from 'hono';
import { renderToString } from 'preact-render-to-string';
import { PreviewPage } from '../components/PreviewPage.tsx';
import { StatusPage } from '../components/StatusPage.tsx';
import type { RedirectPages } from '../lib/redirect/answer_redirect.ts';
import type { AppEnv, WebDeps } from './app_env.ts';

/** The short host's pages (410, 451, expired, warn interstitial, not found, preview), server-rendered. */
export const redirectPages: RedirectPages = {
  status: (page) => `<!doctype html>${renderToString(<StatusPage page={page} />)}`,
  preview: (preview) => `<!doctype html>${renderToString(<PreviewPage preview={preview} />)}`,
};

/**
 * GET|HEAD /:code on Hono (Deno, tests, and Node requests the fast path does not take): wiring only. The
 * answer is decided in lib/redirect/answer_redirect.ts, by the same answerer the Node fast path uses.
 */
export function createRedirectRoutes(deps: WebDeps) {
  const app = new Hono<AppEnv>();
  app.on(['GET', 'HEAD'], '/:code', async (c) => {
    // lifeline_redirect_duration_seconds from here (the route reached) to the Response built, errors included.
    const started = performance.now();
    try {
      const url = c.req.url;
      const queryAt = url.indexOf('?');
      const answer = await deps.redirects.answer({
        method: c.req.method,
        code: c.req.param('code'),
        query: queryAt < 0 ? '' : url.slice(queryAt + 1),
        header: (name) => c.req.header(name),
      });
      return new Response(answer.body, { status: answer.status, headers: answer.headers });
    } finally {
      deps.metrics.redirectDuration.observeMs(performance.now() - started);
    }
  });
  return app;
}
