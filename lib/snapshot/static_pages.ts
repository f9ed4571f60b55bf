import { STATUS_PAGE_TEXT } from '../redirect/status_page_text.ts';
import type { StaticPage } from './static_answer.ts';

// The pages a static snapshot serves: the same titles and words as Lifeline's own (lib/redirect/status_page_text.ts),
// self-contained (no stylesheet, script or form: the snapshot answers when nothing of ours runs).

/** The Content-Security-Policy of snapshot pages: nothing but the page itself (no styles, scripts, frames). */
export const STATIC_PAGE_CSP =
  "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** A snapshot page; the warn page names its destination and links to it. */
export function renderStaticPage(kind: StaticPage, destination?: string): string {
  const text = STATUS_PAGE_TEXT[kind];
  const go =
    destination === undefined
      ? ''
      : `<p>Destination: <code>${escapeHtml(destination)}</code></p>\n` +
        `<p><a href="${escapeHtml(destination)}" rel="noopener noreferrer nofollow">Continue to the site</a></p>\n`;
  return (
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n<meta name="robots" content="noindex">\n` +
    `<title>${escapeHtml(text.title)}</title>\n</head>\n<body>\n<h1>${escapeHtml(text.title)}</h1>\n` +
    `<p>${escapeHtml(text.body)}</p>\n${go}</body>\n</html>\n`
  );
}
