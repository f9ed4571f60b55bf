// What the last check of a link's destination saw (link rot): the outcome and verdict, where the link lands, the
// redirects followed, TLS, and the page's title — the crawl on create. "Not checked yet" until the first check.
import type { DestinationState } from '../../lib/destinations/destination_state.ts';
import { DisplayUrl } from '../DisplayUrl.tsx';
import { useI18n } from '../I18n.tsx';
import { Fact } from './Fact.tsx';

/**
 * The destination-check card; `editorTitle`: the link's own title. The page's title is shown when the link has
 * none, or when the link's title is the page's (the first check filled it in).
 */
export function DestinationCheckCard(props: { state: DestinationState | null; editorTitle: string | null }) {
  const i18n = useI18n();
  const { t } = i18n;
  const { state } = props;
  return (
    <section class="card" aria-labelledby="destination-check-title" id="destination-check">
      <h2 id="destination-check-title">{t('destcheck.title')}</h2>
      {!state?.checkedAt || !state.outcome ? (
        <p class="muted">{t('destcheck.notChecked')}</p>
      ) : (
        <>
          <dl class="facts">
            <Fact label={t('destcheck.outcome')}>
              <span data-outcome={state.outcome}>{t(`destcheck.outcome.${state.outcome}`)}</span>
            </Fact>
            <Fact label={t('destcheck.verdict')}>
              <span data-verdict={state.verdict}>{t(`destcheck.verdict.${state.verdict}`)}</span>
            </Fact>
            {state.httpStatus !== null && (
              <Fact label={t('destcheck.status')}>
                <bdi dir="ltr">{String(state.httpStatus)}</bdi>
              </Fact>
            )}
            {state.pageTitle && (!props.editorTitle || props.editorTitle === state.pageTitle) && (
              <Fact label={t('destcheck.pageTitle')}>
                <bdi dir="auto" data-page-title>
                  {state.pageTitle}
                </bdi>
              </Fact>
            )}
            {state.finalUrl && state.finalUrl !== state.url && (
              <Fact label={t('destcheck.finalUrl')}>
                <DisplayUrl url={state.finalUrl} class="url-break" />
              </Fact>
            )}
            <Fact label={t('destcheck.chain')}>
              {state.chain.length > 1 ? (
                <ol class="chain" dir="ltr">
                  {state.chain.map((hop) => (
                    <li>
                      <code>{String(hop.status)}</code> <span class="url-break">{hop.url}</span>
                    </li>
                  ))}
                </ol>
              ) : (
                t('destcheck.noRedirects')
              )}
            </Fact>
            <Fact label={t('destcheck.tls')}>
              {state.tls?.error
                ? t('destcheck.tlsError', { error: state.tls.error })
                : state.tls
                  ? t('destcheck.tlsValue', {
                      protocol: state.tls.protocol ?? '?',
                      issuer: state.tls.issuer ?? '?',
                      date: state.tls.validTo ? i18n.dateTime(new Date(state.tls.validTo)) : '?',
                    })
                  : t('destcheck.plainHttp')}
            </Fact>
            {state.error && (
              <Fact label={t('destcheck.error')}>
                <code dir="ltr" class="url-break">
                  {state.error}
                </code>
              </Fact>
            )}
          </dl>
          <p class="muted small">
            {t('destcheck.checked', {
              time: i18n.dateTime(state.checkedAt),
              next: i18n.dateTime(state.nextCheckAt),
            })}
          </p>
        </>
      )}
    </section>
  );
}
