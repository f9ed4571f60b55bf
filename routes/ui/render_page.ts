import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/** Server-renders a page as the response (UI pages are never cached: they show an editor's data). */
export function renderPage(c: Context, page: VNode, status: ContentfulStatusCode = 200) {
  return c.html(`<!doctype html>${renderToString(page)}`, status, { 'Cache-Control': 'no-store' });
}
