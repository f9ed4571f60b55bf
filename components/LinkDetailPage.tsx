import type { ComponentChildren } from 'preact';
import CopyButton from '../islands/CopyButton.tsx';
import type { UiSession } from '../lib/auth/sessions.ts';
import type { LinkStats } from '../lib/clicks/link_stats.ts';
import type { I18n } from '../lib/i18n/translator.ts';
import { type Link, type StoredLink as LinkRow, TITLE_MAX_CHARS } from '../lib/links/link.ts';
import type { LinkHistoryEntry as AuditRow } from '../lib/links/link_history.ts';
import { describeTimeZone } from '../lib/ui/time_zone.ts';
import { AppLayout } from './AppLayout.tsx';
import { AuditHistory, describeActor } from './AuditHistory.tsx';
import { SafetyBadge, StatusBadge, VendorStateBadge } from './Badge.tsx';
import { ClicksChart } from './ClicksChart.tsx';
import { DisplayUrl } from './DisplayUrl.tsx';
import { ClicksCsvLinks } from './ExportLinks.tsx';
import { CsrfField, ErrorSummary, Notice, SelectField, TextField } from './Field.tsx';
import { DirIcon, useI18n } from './I18n.tsx';
import { Island } from './Island.tsx';
import { getLinkFieldLabels, getRedirectOptions, vendorName } from './link_fields.ts';
import { UtmFields, UtmParams } from './UtmFields.tsx';
import { VendorComparison } from './VendorComparison.tsx';

export const STATS_RANGES = [7, 30, 90] as const;

const withoutScheme = (url: string) => url.replace(/^https?:\/\//, '');

/** "FR" → "France (FR)"; null → "Unknown". */
function countryName(i18n: I18n, code: string | null): string {
  if (!code) return i18n.t('common.unknown');
  return i18n.t('detail.country', { name: i18n.region(code), code });
}

function Fact(props: { label: string; children: ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}

function TopList(props: {
  title: string;
  rows: { label: string; clicks: number; dir?: 'ltr' | 'auto' }[];
  empty: string;
}) {
  const i18n = useI18n();
  const max = Math.max(1, ...props.rows.map((r) => r.clicks));
  return (
    <div class="top-list">
      <h3>{props.title}</h3>
      {props.rows.length === 0 ? (
        <p class="muted small">{props.empty}</p>
      ) : (
        <table class="compact-table">
          <thead class="visually-hidden">
            <tr>
              <th scope="col">{props.title}</th>
              <th scope="col">{i18n.t('detail.clicks')}</th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((r) => (
              <tr key={r.label}>
                <th scope="row">
                  <svg class="meter" viewBox="0 0 100 4" preserveAspectRatio="none" aria-hidden="true">
                    <rect class="meter-track" width="100" height="4" rx="2" />
                    <rect
                      class="meter-fill"
                      width={Math.max(2, Math.round((r.clicks / max) * 100))}
                      height="4"
                      rx="2"
                    />
                  </svg>
                  <bdi dir={r.dir}>{r.label}</bdi>
                </th>
                <td class="num">{i18n.number(r.clicks)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** Everything about one link: where it goes, its state everywhere, its clicks, its history; edit and delete. */
export function LinkDetailPage(props: {
  session: UiSession;
  link: Link;
  row: Pick<LinkRow, 'safetyReason' | 'safetyCheckedAt' | 'owner' | 'version'>;
  stats: LinkStats;
  days: number;
  audit: AuditRow[];
  temporal: { url: string | null; query: string };
  timeZone: string;
  notice?: { tone: 'good' | 'warn' | 'bad' | 'info'; title: string; text?: string } | undefined;
  edit: { values: Record<string, string>; errors: Record<string, string> };
  deleteError?: string | undefined;
  /**
   * The link is a WordPress article's and the viewer is no administrator: the fields that decide where readers
   * land are shown disabled (lib/links/post_link_rules.ts).
   */
  postLocked?: boolean;
  /** Open reader reports of the link: its editors are told on its page. */
  readerReports?: { open: number; reasons: string[] } | undefined;
  /** UTM_PARAMS, shown beside the link's own UTM fields. */
  deploymentUtm?: string | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const { link, stats, timeZone } = props;
  const labels = getLinkFieldLabels(i18n);
  const qrBase = `/ui/links/${encodeURIComponent(link.code)}/qr`;
  const editable = link.status === 'active' || link.status === 'gone';
  const statusOptions = [
    ...(editable
      ? []
      : [{ value: '', label: t('detail.keepStatus', { status: t(`status.${link.status}`) }) }]),
    { value: 'active', label: t('detail.statusActive') },
    { value: 'gone', label: t('detail.statusGone') },
  ];
  const { values, errors } = props.edit;
  const locked = props.postLocked === true;
  const copyLabels = { copiedLabel: t('copy.copied') };
  // The creation entry names a person; the owner column only holds an id.
  const creator =
    [...props.audit].reverse().find((e) => e.action === 'link.created' || e.action === 'link.minted')
      ?.actor ?? props.row.owner;
  return (
    <AppLayout title={link.title ?? link.code} session={props.session} section="links">
      <div class="page-header">
        <div class="min-w-0">
          <p class="breadcrumb">
            <a href="/ui/links">{t('nav.links')}</a> /
          </p>
          <h1 class="short-url-heading">
            <span class="visually-hidden">{t('detail.shortLink')} </span>
            <bdi dir="ltr">{withoutScheme(link.shortUrl)}</bdi>
          </h1>
          {link.title && (
            <p class="link-heading-title">
              <bdi dir="auto">{link.title}</bdi>
            </p>
          )}
          <div class="header-badges">
            <StatusBadge status={link.status} />
            <SafetyBadge safety={link.safety} />
            {link.tags.map((tag) => (
              <a key={tag} class="tag" dir="auto" href={`/ui/links?tag=${encodeURIComponent(tag)}`}>
                {tag}
              </a>
            ))}
          </div>
        </div>
        <div class="header-actions">
          <Island
            name="CopyButton"
            component={CopyButton}
            props={{ text: link.shortUrl, label: t('copy.link'), ...copyLabels }}
          />
          <a class="btn btn-secondary btn-sm" href={link.shortUrl} target="_blank" rel="noopener noreferrer">
            {t('detail.open')} <DirIcon glyph="↗" />
          </a>
          <a
            class="btn btn-secondary btn-sm"
            href={`${link.shortUrl}+`}
            target="_blank"
            rel="noopener noreferrer"
          >
            {t('detail.preview')}
          </a>
        </div>
      </div>

      {props.notice && (
        <Notice tone={props.notice.tone} title={props.notice.title}>
          {props.notice.text && <p>{props.notice.text}</p>}
        </Notice>
      )}
      {props.readerReports && props.readerReports.open > 0 && (
        <Notice tone="warn" title={t('reports.onLink.title', { n: props.readerReports.open })}>
          <p id="reader-reports">
            {props.readerReports.reasons.length > 0 &&
              `${t('reports.onLink.reasons', { reasons: props.readerReports.reasons.join('; ') })} `}
            {t('reports.onLink.text')}
            {props.session.user.role === 'admin' && (
              <>
                {' '}
                <a href="/ui/reports">{t('reports.onLink.queue')}</a>
              </>
            )}
          </p>
        </Notice>
      )}

      <div class="detail-grid">
        <div class="stack">
          <section class="card" aria-labelledby="destination-title">
            <h2 id="destination-title">{t('detail.destination')}</h2>
            <p class="destination">
              <a href={link.url} target="_blank" rel="noopener noreferrer" class="url-break">
                <DisplayUrl url={link.url} />
              </a>
            </p>
            <details class="exact-url">
              <summary>{t('detail.exactUrl')}</summary>
              <code class="url-break" dir="ltr">
                {link.url}
              </code>
            </details>
            <dl class="facts">
              <Fact label={t('detail.expires')}>
                {link.expiresAt ? i18n.dateTime(new Date(link.expiresAt)) : t('common.never')}
              </Fact>
              <Fact label={t('detail.afterExpiry')}>
                {link.expiredUrl ? (
                  <DisplayUrl url={link.expiredUrl} class="url-break" />
                ) : (
                  t('detail.expiredPage')
                )}
              </Fact>
              <Fact label={t('detail.redirect')}>
                {link.redirectStatus ? String(link.redirectStatus) : t('detail.deploymentDefault')}
              </Fact>
              {link.utm && (
                <Fact label={t('detail.utm')}>
                  <UtmParams utm={link.utm} />
                </Fact>
              )}
              <Fact label={t('detail.madeBy')}>
                {i18n.rich('detail.madeByValue', {
                  actor: <bdi dir="auto">{describeActor(i18n, creator)}</bdi>,
                  origin: t(`detail.origin.${link.origin}`),
                })}
              </Fact>
              {link.site && (
                <Fact label={t('detail.article')}>
                  <bdi dir="ltr">
                    {link.site} #{link.postId}
                  </bdi>
                </Fact>
              )}
              <Fact label={t('detail.created')}>{i18n.dateTime(new Date(link.createdAt))}</Fact>
              <Fact label={t('detail.lastChange')}>{i18n.dateTime(new Date(link.updatedAt))}</Fact>
            </dl>
          </section>

          <section class="card" aria-labelledby="clicks-title">
            <div class="card-header">
              <h2 id="clicks-title">{t('detail.clicks')}</h2>
              <nav class="segmented" aria-label={t('detail.period')}>
                {STATS_RANGES.map((d) => (
                  <a
                    key={d}
                    href={`/ui/links/${encodeURIComponent(link.code)}?days=${d}#clicks-title`}
                    aria-current={props.days === d ? 'true' : undefined}
                  >
                    {t('detail.days', { days: d })}
                  </a>
                ))}
              </nav>
            </div>
            <div class="stat-row">
              <div class="stat">
                <span class="stat-value">{i18n.number(stats.clicks)}</span>
                <span class="stat-label">{t('detail.people')}</span>
              </div>
              <div class="stat">
                <span class="stat-value">{i18n.number(stats.qrScans)}</span>
                <span class="stat-label">{t('detail.byQr')}</span>
              </div>
              <div class="stat">
                <span class="stat-value">{i18n.number(stats.previews)}</span>
                <span class="stat-label">{t('detail.previews')}</span>
              </div>
              <div class="stat">
                <span class="stat-value">{i18n.number(stats.botHits)}</span>
                <span class="stat-label">{t('detail.bots')}</span>
              </div>
              {stats.vendor && (
                <div class="stat">
                  <span class="stat-value">{i18n.number(stats.vendor.clicks)}</span>
                  <span class="stat-label">
                    {t('detail.countedBy', {
                      vendor: vendorName(i18n, stats.vendor.name),
                      days: stats.vendor.comparedDays,
                    })}
                  </span>
                </div>
              )}
            </div>
            <ClicksChart stats={stats} />
            <div class="grid-2">
              <TopList
                title={t('detail.topCountries')}
                rows={stats.byCountry.map((c) => ({ label: countryName(i18n, c.country), clicks: c.clicks }))}
                empty={t('detail.noCountries')}
              />
              <TopList
                title={t('detail.topReferrers')}
                rows={stats.byReferrer.map((r) =>
                  r.host
                    ? { label: r.host, clicks: r.clicks, dir: 'ltr' as const }
                    : { label: t('detail.direct'), clicks: r.clicks },
                )}
                empty={t('detail.noReferrers')}
              />
            </div>
            <ClicksCsvLinks code={link.code} days={props.days} />
          </section>

          {stats.vendor && <VendorComparison comparison={stats.vendor} />}

          <section class="card" aria-labelledby="edit-title" id="edit">
            <h2 id="edit-title">{t('detail.edit')}</h2>
            <p class="muted">{t('detail.editLead')}</p>
            <form
              method="post"
              action={`/ui/links/${encodeURIComponent(link.code)}/edit`}
              class="stack"
              novalidate
            >
              <CsrfField token={props.session.csrfToken} />
              <input type="hidden" name="version" value={values.version ?? String(props.row.version)} />
              <input type="hidden" name="expiresAtShown" value={values.expiresAtShown ?? ''} />
              <ErrorSummary errors={errors} />
              {locked && <p class="hint">{t('detail.postLocked')}</p>}
              <TextField
                name="url"
                label={labels.url!}
                type="url"
                value={values.url}
                error={errors.url}
                required
                disabled={locked}
              />
              <TextField
                name="title"
                label={labels.title!}
                value={values.title}
                error={errors.title}
                dir="auto"
                maxLength={TITLE_MAX_CHARS}
                hint={t('detail.titleHint')}
              />
              <div class="grid-2">
                <SelectField
                  name="status"
                  label={labels.status!}
                  disabled={locked}
                  value={values.status}
                  error={errors.status}
                  options={statusOptions}
                  required
                />
                <SelectField
                  name="redirectStatus"
                  label={labels.redirectStatus!}
                  disabled={locked}
                  value={values.redirectStatus}
                  error={errors.redirectStatus}
                  options={getRedirectOptions(i18n)}
                />
              </div>
              <div class="grid-2">
                <TextField
                  name="expiresAt"
                  label={labels.expiresAt!}
                  disabled={locked}
                  type="datetime-local"
                  value={values.expiresAt}
                  error={errors.expiresAt}
                  hint={t('detail.expiresHint', { zone: describeTimeZone(timeZone) })}
                />
                <TextField
                  name="expiredUrl"
                  label={labels.expiredUrl!}
                  disabled={locked}
                  type="url"
                  value={values.expiredUrl}
                  error={errors.expiredUrl}
                />
              </div>
              <TextField
                name="tags"
                label={labels.tags!}
                value={values.tags}
                error={errors.tags}
                dir="auto"
                hint={t('detail.tagsHint')}
              />
              <UtmFields values={values} errors={errors} deploymentUtm={props.deploymentUtm} />
              <TextField
                name="reason"
                label={t('detail.reasonLabel')}
                value={values.reason}
                error={errors.reason}
                required
                dir="auto"
                maxLength={500}
                placeholder={t('detail.reasonPlaceholder')}
                hint={t('detail.reasonHint')}
              />
              <div class="form-actions">
                <button type="submit" class="btn btn-primary">
                  {t('detail.save')}
                </button>
              </div>
            </form>
          </section>

          <section class="card" aria-labelledby="history-title">
            <h2 id="history-title">{t('detail.history')}</h2>
            <AuditHistory entries={props.audit} timeZone={timeZone} />
          </section>
        </div>

        <aside class="stack">
          <section class="card qr-card" aria-labelledby="qr-title">
            <h2 id="qr-title">{t('detail.qr')}</h2>
            <img
              src={`${qrBase}.svg`}
              width={200}
              height={200}
              alt={t('detail.qrAlt', { url: withoutScheme(link.shortUrl) })}
              class="qr"
            />
            <p class="muted small">{t('detail.qrNote')}</p>
            <div class="button-row">
              <a
                class="btn btn-secondary btn-sm"
                href={`${qrBase}.svg?download=1`}
                download={`${link.code}-qr.svg`}
              >
                {t('detail.qrSvg')}
              </a>
              <a
                class="btn btn-secondary btn-sm"
                href={`${qrBase}.png?download=1`}
                download={`${link.code}-qr.png`}
              >
                {t('detail.qrPng')}
              </a>
            </div>
          </section>

          <section class="card" aria-labelledby="safety-title">
            <h2 id="safety-title">{t('detail.safety')}</h2>
            <p>
              <SafetyBadge safety={link.safety} />
            </p>
            {props.row.safetyReason && (
              <p class="url-break" dir="auto">
                {props.row.safetyReason}
              </p>
            )}
            <p class="muted small">
              {props.row.safetyCheckedAt
                ? t('detail.lastChecked', { time: i18n.dateTime(props.row.safetyCheckedAt) })
                : t('detail.notScanned')}
            </p>
          </section>

          <section class="card" aria-labelledby="replicas-title">
            <h2 id="replicas-title">{t('detail.served')}</h2>
            {link.vendors.length === 0 ? (
              <p class="muted small">{t('detail.noVendor')}</p>
            ) : (
              <ul class="replicas">
                {link.vendors.map((v) => (
                  <li key={v.name}>
                    <div class="replica-head">
                      <strong>{vendorName(i18n, v.name)}</strong>
                      <VendorStateBadge state={v.state} />
                    </div>
                    <span class="muted small">
                      {v.syncedAt
                        ? t('detail.synced', { time: i18n.dateTime(new Date(v.syncedAt)) })
                        : t('detail.neverSynced')}
                    </span>
                    {v.error && (
                      <p class="small error-text url-break" dir="auto">
                        {v.error}
                      </p>
                    )}
                  </li>
                ))}
              </ul>
            )}
            {props.temporal.url ? (
              <a
                class="btn btn-ghost btn-sm"
                href={props.temporal.url}
                target="_blank"
                rel="noopener noreferrer"
              >
                {t('detail.temporal')} <DirIcon glyph="↗" />
              </a>
            ) : (
              <p class="muted small">
                {i18n.rich('detail.temporalSearch', {
                  query: (
                    <code class="url-break" dir="ltr">
                      {props.temporal.query}
                    </code>
                  ),
                })}
              </p>
            )}
          </section>

          <section class="card danger-zone" aria-labelledby="delete-title">
            <h2 id="delete-title">{t('detail.delete')}</h2>
            <p class="small">{t('detail.deleteLead')}</p>
            <form method="post" action={`/ui/links/${encodeURIComponent(link.code)}/delete`} class="stack">
              <CsrfField token={props.session.csrfToken} />
              <TextField
                name="confirm"
                id="delete-confirm"
                label={t('detail.deleteConfirm', { code: link.code })}
                required
                dir="ltr"
                error={props.deleteError}
              />
              <TextField name="reason" id="delete-reason" label={t('detail.deleteReason')} dir="auto" />
              <button type="submit" class="btn btn-danger">
                {t('detail.deleteButton')}
              </button>
            </form>
          </section>
        </aside>
      </div>
    </AppLayout>
  );
}
