import type { UiSession } from '../lib/auth/sessions.ts';
import type { DestinationItem, DestinationListState } from '../lib/destinations/list_destinations.ts';
import { AppLayout } from './AppLayout.tsx';
import { CsrfField, Notice } from './Field.tsx';
import { useI18n } from './I18n.tsx';

const OUTCOMES = ['ok', 'moved', 'gone', 'soft-404', 'unreachable', 'parked'] as const;

/** A check's outcome as its catalogue names it (unknown for none yet, or one this page does not know). */
function outcomeName(outcome: string | null): (typeof OUTCOMES)[number] | 'unknown' {
  return OUTCOMES.find((o) => o === outcome) ?? 'unknown';
}

const STATE_TABS: readonly DestinationListState[] = ['dead', 'fallback', 'proposed', 'moved', 'suspect'];

/** /ui/destinations: links whose destination died (or moved), what the checks saw, the copy, and what to do. */
export function DestinationsPage(props: {
  session: UiSession;
  state: DestinationListState;
  items: DestinationItem[];
  nextCursor: string | null;
  notice?: { tone: 'good' | 'warn' | 'bad' | 'info'; title: string; text?: string } | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const when = (iso: string | null) => (iso ? i18n.dateTime(new Date(iso)) : '');
  return (
    <AppLayout title={t('destinations.title')} session={props.session} section="destinations">
      <div class="page-header">
        <div>
          <h1>{t('destinations.heading')}</h1>
          <p class="muted">{t('destinations.lede')}</p>
        </div>
      </div>
      {props.notice && (
        <Notice tone={props.notice.tone} title={props.notice.title}>
          {props.notice.text && <p>{props.notice.text}</p>}
        </Notice>
      )}
      <nav class="tabs" aria-label={t('destinations.tabs')}>
        {STATE_TABS.map((state) => (
          <a
            key={state}
            href={`/ui/destinations${state === 'dead' ? '' : `?state=${state}`}`}
            aria-current={state === props.state ? 'page' : undefined}
          >
            {t(`destinations.state.${state}`)}
          </a>
        ))}
      </nav>
      {props.items.length === 0 ? (
        <p class="empty" id="destinations-empty">
          {t('destinations.empty')}
        </p>
      ) : (
        <ul class="report-queue" id="destination-queue">
          {props.items.map((item) => (
            <li key={item.code} class="card report-item" id={`destination-${item.code}`}>
              <div class="report-head">
                <a href={`/ui/links/${encodeURIComponent(item.code)}`} class="code" dir="ltr">
                  {item.shortUrl.replace(/^https?:\/\//, '')}
                </a>
                <span class="badge">
                  {t(
                    `destinations.state.${item.verdict === 'unchecked' || item.verdict === 'ok' ? 'dead' : item.verdict}`,
                  )}
                </span>
              </div>
              {item.title && (
                <p class="report-title" dir="auto">
                  {item.title}
                </p>
              )}
              <p class="destination">
                <span class="label">{t('destinations.col.link')}</span> <code dir="ltr">{item.url}</code>
              </p>
              <p class="small">
                <span class="label">{t('destinations.col.seen')}</span>{' '}
                {t('destinations.seen', {
                  outcome: `${t(`destinations.outcome.${outcomeName(item.outcome)}`)}${item.httpStatus !== null ? ` (HTTP ${item.httpStatus})` : ''}`,
                  when: when(item.verdictAt ?? item.checkedAt),
                })}
              </p>
              {item.chain.length > 0 && (
                <details>
                  <summary>{t('destinations.chain')}</summary>
                  <ol class="chain" dir="ltr">
                    {item.chain.map((hop, i) => (
                      <li key={`${i}-${hop.url}`}>
                        <code>{hop.status}</code> <code>{hop.url}</code>
                        {hop.location ? (
                          <>
                            {' → '}
                            <code>{hop.location}</code>
                          </>
                        ) : null}
                      </li>
                    ))}
                  </ol>
                </details>
              )}
              <p class="small">
                <span class="label">{t('destinations.col.copy')}</span>{' '}
                {item.archive.url ? (
                  <a href={item.archive.url} rel="noopener noreferrer nofollow">
                    {t('destinations.copy', { when: when(item.archive.at) })}
                  </a>
                ) : (
                  t('destinations.noCopy')
                )}
              </p>
              <p class="small">
                <span class="label">{t('destinations.col.policy')}</span>{' '}
                {t(`destinations.policy.${item.policy.effective}`)} (
                {item.policy.from === 'host'
                  ? t('destinations.policyFrom.host', { host: item.host })
                  : t(`destinations.policyFrom.${item.policy.from}`)}
                )
              </p>
              {item.post && (
                <p class="small">
                  {t('destinations.wordpress', { postId: item.post.postId, site: item.post.site })}
                </p>
              )}
              {item.proposedUrl && (
                <form
                  method="post"
                  action={`/ui/destinations/${encodeURIComponent(item.code)}/retarget`}
                  class="report-actions"
                >
                  <CsrfField token={props.session.csrfToken} />
                  <input type="hidden" name="state" value={props.state} />
                  <p class="small">
                    {t('destinations.proposed')} <code dir="ltr">{item.proposedUrl}</code>
                  </p>
                  <div class="button-row">
                    <button type="submit" class="btn btn-primary btn-sm">
                      {t('destinations.action.retarget')}
                    </button>
                  </div>
                </form>
              )}
            </li>
          ))}
        </ul>
      )}
      {props.nextCursor && (
        <p>
          <a
            class="btn btn-secondary"
            href={`/ui/destinations?${new URLSearchParams({ ...(props.state === 'dead' ? {} : { state: props.state }), cursor: props.nextCursor })}`}
          >
            {t('reports.more')}
          </a>
        </p>
      )}
    </AppLayout>
  );
}
