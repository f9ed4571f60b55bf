import type { RedirectDecision } from '../lib/redirect/redirect_policy.ts';
import { STATUS_PAGE_TEXT } from '../lib/redirect/status_page_text.ts';
import { PublicPage } from './PublicPage.tsx';
import { ReportForm } from './ReportForm.tsx';

type Page = NonNullable<RedirectDecision['page']>;

/** The page the short host shows instead of redirecting (404, 410, 451, the warn interstitial with a report form). */
export function StatusPage(props: { page: Page }) {
  const text = STATUS_PAGE_TEXT[props.page.kind];
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
