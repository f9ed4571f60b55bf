import type { UiSession } from '../lib/auth/sessions.ts';
import type { LinkStatus, SafetyVerdict } from '../lib/links/link.ts';
import type { ReportQueueItem, ReportStatus } from '../lib/safety/moderate_reports.ts';
import { AppLayout } from './AppLayout.tsx';
import { SafetyBadge, StatusBadge } from './Badge.tsx';
import { CsrfField, Notice } from './Field.tsx';
import { useI18n } from './I18n.tsx';

const STATUS_TABS: readonly ReportStatus[] = ['open', 'ignored', 'confirmed', 'dismissed'];

/** The decisions, as the buttons say them (each with a title saying what it does). */
const ACTIONS = [
  { action: 'dismiss', class: 'btn btn-secondary btn-sm' },
  { action: 'confirm', class: 'btn btn-danger btn-sm' },
  { action: 'ignore', class: 'btn btn-ghost btn-sm' },
] as const;

/** /ui/reports (administrators): links readers reported, with the reasons, and what to do about them. */
export function ReportsPage(props: {
  session: UiSession;
  status: ReportStatus;
  items: ReportQueueItem[];
  nextCursor: string | null;
  notice?: { tone: 'good' | 'warn' | 'bad' | 'info'; title: string; text?: string } | undefined;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  // Which decisions make sense from each tab: a confirmed link can only be dismissed (unblocked), an ignored
  // one not ignored again; dismissed reports are history.
  const actions = ACTIONS.filter(
    (a) =>
      props.status !== 'dismissed' &&
      !(props.status === 'confirmed' && a.action !== 'dismiss') &&
      !(props.status === 'ignored' && a.action === 'ignore'),
  );
  return (
    <AppLayout title={t('reports.title')} session={props.session} section="reports">
      <div class="page-header">
        <div>
          <h1>{t('reports.heading')}</h1>
          <p class="muted">{t('reports.lede')}</p>
        </div>
      </div>
      {props.notice && (
        <Notice tone={props.notice.tone} title={props.notice.title}>
          {props.notice.text && <p>{props.notice.text}</p>}
        </Notice>
      )}
      <nav class="tabs" aria-label={t('reports.tabs')}>
        {STATUS_TABS.map((status) => (
          <a
            key={status}
            href={`/ui/reports${status === 'open' ? '' : `?status=${status}`}`}
            aria-current={status === props.status ? 'page' : undefined}
          >
            {t(`reports.status.${status}`)}
          </a>
        ))}
      </nav>
      {props.items.length === 0 ? (
        <p class="empty" id="reports-empty">
          {props.status === 'open' ? t('reports.empty.open') : t('reports.empty.other')}
        </p>
      ) : (
        <ul class="report-queue" id="report-queue">
          {props.items.map((item) => (
            <li key={item.code} class="card report-item" id={`report-${item.code}`}>
              <div class="report-head">
                <a href={`/ui/links/${encodeURIComponent(item.code)}`} class="code">
                  {item.shortUrl.replace(/^https?:\/\//, '')}
                </a>
                <StatusBadge status={item.status as LinkStatus} />
                <SafetyBadge safety={item.safety as SafetyVerdict} />
              </div>
              {item.title && <p class="report-title">{item.title}</p>}
              <p class="destination">
                <span class="label">{t('reports.destination')}</span> <code dir="ltr">{item.url}</code>
              </p>
              <p class="small">
                {t('reports.summary', {
                  reports: item.reports,
                  total: item.totalReports,
                  owner: item.owner,
                  when: i18n.dateTime(new Date(item.lastReportedAt)),
                })}
              </p>
              <ul class="report-reasons">
                {item.reasons.map((r) => (
                  <li key={r.reason}>
                    {r.reason || t('reports.noReason')} <span class="muted">× {i18n.number(r.count)}</span>
                  </li>
                ))}
              </ul>
              {actions.length > 0 && (
                <form
                  method="post"
                  action={`/ui/reports/${encodeURIComponent(item.code)}`}
                  class="report-actions"
                >
                  <CsrfField token={props.session.csrfToken} />
                  <input type="hidden" name="status" value={props.status} />
                  <label for={`note-${item.code}`}>{t('reports.note')}</label>
                  <input id={`note-${item.code}`} name="note" maxLength={500} />
                  <div class="button-row">
                    {actions.map((a) => (
                      <button
                        key={a.action}
                        type="submit"
                        name="action"
                        value={a.action}
                        class={a.class}
                        title={t(`reports.action.${a.action}Help`)}
                      >
                        {t(`reports.action.${a.action}`)}
                      </button>
                    ))}
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
            href={`/ui/reports?${new URLSearchParams({ ...(props.status === 'open' ? {} : { status: props.status }), cursor: props.nextCursor })}`}
          >
            {t('reports.more')}
          </a>
        </p>
      )}
    </AppLayout>
  );
}
