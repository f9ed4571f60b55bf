import type { RedirectDecision } from '../lib/redirect/redirect_policy.ts';
import { ARCHIVED_PAGE_TEXT, STATUS_PAGE_TEXT } from '../lib/redirect/status_page_text.ts';
import { PublicPage } from './PublicPage.tsx';
import { ReportForm } from './ReportForm.tsx';

type Page = NonNullable<RedirectDecision['page']>;

/**
 * The page the short host shows instead of redirecting (404, 410, 451, the warn interstitial with a report form,
 * and a dead destination's archived copy).
 */
export function StatusPage(props: { page: Page }) {
  const text = STATUS_PAGE_TEXT[props.page.kind];
  if (props.page.kind === 'archived')
    return <ArchivedPage page={props.page} title={text.title} body={text.body} />;
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

/** A dead destination answered with its archived copy: the copy as the way on, the original address as text. */
function ArchivedPage(props: { page: Page; title: string; body: string }) {
  return (
    <PublicPage title={props.title}>
      <h1>{props.title}</h1>
      <p>{props.body}</p>
      {props.page.original !== undefined && (
        <p class="destination">
          <span class="label">{ARCHIVED_PAGE_TEXT.original}</span>
          <code>{props.page.original}</code>
        </p>
      )}
      {props.page.destination !== undefined && (
        <p>
          <a class="button" href={props.page.destination} rel="noopener noreferrer nofollow">
            {ARCHIVED_PAGE_TEXT.button}
          </a>
        </p>
      )}
    </PublicPage>
  );
}
