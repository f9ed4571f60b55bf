import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { h, type VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { I18nContext } from '../../components/I18n.tsx';
import { pickLocale } from '../../lib/i18n/locales.ts';
import { createI18n, type I18n } from '../../lib/i18n/translator.ts';

/** The request's language tools: set by the UI session middleware, else from the browser's languages. */
export function getI18n(c: Context): I18n {
  return (
    (c.get('i18n') as I18n | undefined) ??
    createI18n(
      pickLocale(null, c.req.header('Accept-Language')),
      (c.get('timeZone') as string | undefined) ?? 'UTC',
    )
  );
}

/**
 * Server-renders a page as the response, in the editor's language (UI pages are never cached: they show an
 * editor's data).
 */
export function renderPage(c: Context, page: VNode, status: ContentfulStatusCode = 200) {
  const i18n = getI18n(c);
  const html = renderToString(h(I18nContext.Provider, { value: i18n }, page));
  return c.html(`<!doctype html>${html}`, status, {
    'Cache-Control': 'no-store',
    'Content-Language': i18n.lang,
    Vary: 'Accept-Language, Cookie',
  });
}
