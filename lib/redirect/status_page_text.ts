import type { RedirectDecision } from './redirect_policy.ts';

/** The kinds of page a redirect can answer with instead of a Location. */
export type PageKind = NonNullable<RedirectDecision['page']>['kind'];

/**
 * The title and words of each status page, in English: Lifeline's own pages (components/StatusPage.tsx) and the
 * static snapshot's self-contained copies (lib/snapshot/static_pages.ts) say the same.
 */
export const STATUS_PAGE_TEXT: Record<PageKind, { title: string; body: string }> = {
  not_found: {
    title: 'Link not found',
    body: 'There is no short link with this address. Check it for typos.',
  },
  gone: {
    title: 'Link removed',
    body: 'This short link has been retired by its publisher and no longer leads anywhere.',
  },
  expired: { title: 'Link expired', body: 'This short link has expired.' },
  blocked: {
    title: 'Link blocked',
    body: 'This short link has been blocked because its destination was found to be unsafe.',
  },
  warn: {
    title: 'Check before you continue',
    body: 'This link leads to a site that may not be what it seems. Continue only if you trust it.',
  },
  archived: {
    title: 'This page is no longer available at its source',
    body: 'The page this link led to no longer answers. An archived copy is kept by the Internet Archive.',
  },
};

/** The archived page's words beside its button and the original address. */
export const ARCHIVED_PAGE_TEXT = { button: 'Read the archived copy', original: 'Original address' };
