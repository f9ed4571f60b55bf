import type { RedirectDecision } from '../lib/redirect/redirect_policy.ts';
import { PublicPage } from './PublicPage.tsx';
import { ReportForm } from './ReportForm.tsx';

type Page = NonNullable<RedirectDecision['page']>;

const TEXT: Record<Page['kind'], { title: string; body: string }> = {
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
};

/** The page the short host shows instead of redirecting (404, 410, 451, the warn interstitial with a report form). */
export function StatusPage(props: { page: Page }) {
  const text = TEXT[props.page.kind];
  return (
    <PublicPage title={text.title}>
      <h1>{text.title}</h1>
      <p>{text.body}</p>
      {props.page.destination !== undefined && (
        <>
          <p class="destination">
            <span class="label">Destination</span>
            <code>{props.page.destination}</code>
          </p>
          <p>
            <a class="button" href={props.page.destination} rel="noopener noreferrer nofollow">
              Continue to the site
            </a>
          </p>
          <ReportForm code={props.page.code} />
        </>
      )}
    </PublicPage>
  );
}
