import type { UiSession } from '../lib/auth/sessions.ts';
import type { HoldJson } from '../lib/publishing/mass_change_breaker.ts';
import type { ReviewItem } from '../lib/publishing/wordpress_admin.ts';
import { AppLayout } from './AppLayout.tsx';
import { describeActor } from './AuditHistory.tsx';
import { Badge } from './Badge.tsx';
import { CsrfField, Notice } from './Field.tsx';
import { DirIcon, useI18n } from './I18n.tsx';

export interface SiteState {
  site: string;
  installationId: string | null;
  previousInstallationId: string | null;
  migrating: boolean;
  migratingSince: string | null;
  openReviews: number;
}

/**
 * /ui/ops/wordpress (admins): each WordPress site's installation and migration mode, the breaker's holds that
 * wait for a decision (counts and a sample), and the review list identity matching filed (ADR 0057).
 */
export function WordPressSitesPage(props: {
  session: UiSession;
  timeZone: string;
  sites: SiteState[];
  holds: HoldJson[];
  reviews: ReviewItem[];
  notice?: { tone: 'good' | 'bad'; title: string } | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const button = (action: string, label: string, tone = 'btn-secondary') => (
    <form method="post" action={action} class="inline-form">
      <CsrfField token={props.session.csrfToken} />
      <button class={`btn ${tone}`} type="submit">
        {label}
      </button>
    </form>
  );
  return (
    <AppLayout title={t('wordpress.title')} session={props.session} section="ops">
      <div class="page-header">
        <div>
          <h1>{t('wordpress.title')}</h1>
          <p class="muted">{t('wordpress.lead')}</p>
        </div>
        <a class="btn btn-secondary" href="/ui/ops">
          <DirIcon glyph="←" /> {t('nav.ops')}
        </a>
      </div>
      {props.notice && <Notice tone={props.notice.tone} title={props.notice.title} />}
      <section class="card" aria-labelledby="sites-title">
        <h2 id="sites-title">{t('wordpress.sites')}</h2>
        {props.sites.length === 0 ? (
          <p class="muted">{t('wordpress.noSites')}</p>
        ) : (
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">{t('wordpress.col.site')}</th>
                <th scope="col">{t('wordpress.col.installation')}</th>
                <th scope="col">{t('wordpress.col.mode')}</th>
                <th scope="col">{t('wordpress.col.reviews')}</th>
              </tr>
            </thead>
            <tbody>
              {props.sites.map((s) => (
                <tr key={s.site}>
                  <td>
                    <bdi dir="ltr">{s.site}</bdi>
                  </td>
                  <td class="mono small" dir="ltr">
                    {s.installationId ?? '—'}
                  </td>
                  <td>
                    {s.migrating ? (
                      <Badge
                        tone="warn"
                        text={t('wordpress.migrating', { since: i18n.dateTime(new Date(s.migratingSince!)) })}
                      />
                    ) : (
                      <Badge tone="good" text={t('wordpress.normal')} />
                    )}
                  </td>
                  <td>{i18n.number(s.openReviews)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section class="card" aria-labelledby="breaker-title">
        <h2 id="breaker-title">{t('wordpress.breaker')}</h2>
        <p class="muted">{t('wordpress.breakerLead')}</p>
        {props.holds.length === 0 ? (
          <p class="muted">{t('wordpress.noHolds')}</p>
        ) : (
          props.holds.map((hold) => (
            <div class="card-inner" key={hold.id}>
              <h3>
                {t('wordpress.hold', {
                  id: String(hold.id),
                  site: hold.site,
                  source: t(
                    hold.source === 'events' ? 'wordpress.source.events' : 'wordpress.source.reconcile',
                  ),
                })}
              </h3>
              <p>
                {t('wordpress.holdCounts', {
                  retarget: i18n.number(hold.counts.retarget?.held ?? 0),
                  gone: i18n.number(hold.counts.gone?.held ?? 0),
                  budget: i18n.number(hold.budget),
                  links: i18n.number(hold.siteLinks),
                })}
              </p>
              <table class="data-table">
                <thead>
                  <tr>
                    <th scope="col">{t('wordpress.col.code')}</th>
                    <th scope="col">{t('wordpress.col.change')}</th>
                    <th scope="col">{t('wordpress.col.before')}</th>
                    <th scope="col">{t('wordpress.col.after')}</th>
                  </tr>
                </thead>
                <tbody>
                  {hold.sample.map((c) => (
                    <tr key={c.code}>
                      <td class="mono" dir="ltr">
                        {c.code}
                      </td>
                      <td>
                        {t(c.change === 'gone' ? 'wordpress.change.gone' : 'wordpress.change.retarget')}
                      </td>
                      <td class="small url-break" dir="ltr">
                        {c.beforeUrl}
                      </td>
                      <td class="small url-break" dir="ltr">
                        {c.afterUrl ?? '410'}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <p>
                {button(
                  `/ui/ops/wordpress/breaker/${hold.id}/approve`,
                  t('wordpress.approve'),
                  'btn-primary',
                )}{' '}
                {button(`/ui/ops/wordpress/breaker/${hold.id}/discard`, t('wordpress.discard'))}
              </p>
            </div>
          ))
        )}
      </section>
      <section class="card" aria-labelledby="reviews-title">
        <h2 id="reviews-title">{t('wordpress.reviews')}</h2>
        <p class="muted">{t('wordpress.reviewsLead')}</p>
        {props.reviews.length === 0 ? (
          <p class="muted">{t('wordpress.noReviews')}</p>
        ) : (
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">{t('wordpress.col.site')}</th>
                <th scope="col">{t('wordpress.col.case')}</th>
                <th scope="col">{t('wordpress.col.decide')}</th>
              </tr>
            </thead>
            <tbody>
              {props.reviews.map((r) => (
                <tr key={r.id}>
                  <td>
                    <bdi dir="ltr">{r.site}</bdi>
                  </td>
                  <td class="small">
                    <strong>{t(`wordpress.kind.${r.kind}`)}</strong>
                    <br />
                    <bdi dir="ltr" class="url-break">
                      {r.detail}
                    </bdi>
                  </td>
                  <td>
                    <form method="post" action={`/ui/ops/wordpress/reviews/${r.id}/resolve`}>
                      <CsrfField token={props.session.csrfToken} />
                      <select name="action" aria-label={t('wordpress.col.decide')}>
                        <option value="keep">{t('wordpress.resolve.keep')}</option>
                        <option value="bind">{t('wordpress.resolve.bind')}</option>
                        <option value="gone">{t('wordpress.resolve.gone')}</option>
                      </select>{' '}
                      <input
                        name="code"
                        dir="ltr"
                        size={10}
                        value={r.code ?? (r.candidates.length === 1 ? r.candidates[0] : '')}
                        placeholder={r.candidates.join(', ')}
                        aria-label={t('wordpress.col.code')}
                      />{' '}
                      <input
                        name="postId"
                        dir="ltr"
                        size={6}
                        value={r.postId === null ? '' : String(r.postId)}
                        aria-label={t('wordpress.col.post')}
                      />{' '}
                      <button class="btn btn-secondary" type="submit">
                        {t('wordpress.resolve')}
                      </button>
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <p class="muted small">
        {t('wordpress.decidedAs', { actor: describeActor(i18n, `user:${props.session.user.email}`) })}
      </p>
    </AppLayout>
  );
}
