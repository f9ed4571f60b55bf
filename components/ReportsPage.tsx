import type { UiSession } from '../lib/auth/sessions.ts';
import type { ReportQueueItem, ReportStatus } from '../lib/safety/moderate_reports.ts';
import { formatDateTime } from '../lib/ui/time_zone.ts';
import { AppLayout } from './AppLayout.tsx';
import { Badge } from './Badge.tsx';
import { CsrfField, Notice } from './Field.tsx';

const STATUS_TABS: { status: ReportStatus; label: string }[] = [
  { status: 'open', label: 'Open' },
  { status: 'ignored', label: 'Ignored' },
  { status: 'confirmed', label: 'Confirmed' },
  { status: 'dismissed', label: 'Dismissed' },
];

const SAFETY_TONE: Record<string, string> = {
  clean: 'good',
  unknown: 'neutral',
  warn: 'warn',
  blocked: 'bad',
};

/** What each decision does, as the buttons say it. */
const ACTIONS = [
  {
    action: 'dismiss',
    label: 'Dismiss',
    help: 'The reports are unfounded: lift any warning they caused.',
    class: 'btn btn-secondary btn-sm',
  },
  {
    action: 'confirm',
    label: 'Confirm and block',
    help: 'The reports are right: block the link (readers get 451).',
    class: 'btn btn-danger btn-sm',
  },
  {
    action: 'ignore',
    label: 'Ignore',
    help: 'Seen, no action: leave the link exactly as it is.',
    class: 'btn btn-ghost btn-sm',
  },
] as const;

/** /ui/reports (administrators): links readers reported, with the reasons, and what to do about them. */
export function ReportsPage(props: {
  session: UiSession;
  status: ReportStatus;
  items: ReportQueueItem[];
  nextCursor: string | null;
  timeZone: string;
  notice?: { tone: 'good' | 'warn' | 'bad' | 'info'; title: string; text?: string } | undefined;
}) {
  return (
    <AppLayout title="Reports" session={props.session} section="reports">
      <div class="page-header">
        <div>
          <h1>Reader reports</h1>
          <p class="lede">
            Links readers reported from the warning and preview pages. Three readers put a link behind the
            warning page until you decide; links on the newsroom's own hosts are only queued.
          </p>
        </div>
      </div>
      {props.notice && (
        <Notice tone={props.notice.tone} title={props.notice.title}>
          {props.notice.text && <p>{props.notice.text}</p>}
        </Notice>
      )}
      <nav class="tabs" aria-label="Report status">
        {STATUS_TABS.map((tab) => (
          <a
            key={tab.status}
            href={`/ui/reports${tab.status === 'open' ? '' : `?status=${tab.status}`}`}
            aria-current={tab.status === props.status ? 'page' : undefined}
          >
            {tab.label}
          </a>
        ))}
      </nav>
      {props.items.length === 0 ? (
        <p class="empty" id="reports-empty">
          {props.status === 'open' ? 'No open reports. Nothing to review.' : 'None.'}
        </p>
      ) : (
        <ul class="report-queue" id="report-queue">
          {props.items.map((item) => (
            <li key={item.code} class="card report-item" id={`report-${item.code}`}>
              <div class="report-head">
                <a href={`/ui/links/${encodeURIComponent(item.code)}`} class="code">
                  {item.shortUrl.replace(/^https?:\/\//, '')}
                </a>
                <Badge tone={SAFETY_TONE[item.safety] ?? 'neutral'} text={`safety: ${item.safety}`} />
                <Badge tone="neutral" text={`status: ${item.status}`} />
              </div>
              {item.title && <p class="report-title">{item.title}</p>}
              <p class="destination">
                <span class="label">Destination</span> <code>{item.url}</code>
              </p>
              <p class="small">
                {item.reports} report{item.reports === 1 ? '' : 's'} ({item.totalReports} in all) · made by{' '}
                {item.owner} · last reported {formatDateTime(new Date(item.lastReportedAt), props.timeZone)}
              </p>
              <ul class="report-reasons">
                {item.reasons.map((r) => (
                  <li key={r.reason}>
                    {r.reason || '(no reason given)'} <span class="muted">× {r.count}</span>
                  </li>
                ))}
              </ul>
              {props.status !== 'dismissed' && (
                <form
                  method="post"
                  action={`/ui/reports/${encodeURIComponent(item.code)}`}
                  class="report-actions"
                >
                  <CsrfField token={props.session.csrfToken} />
                  <input type="hidden" name="status" value={props.status} />
                  <label for={`note-${item.code}`}>Note for the history (optional)</label>
                  <input id={`note-${item.code}`} name="note" maxLength={500} />
                  <div class="button-row">
                    {ACTIONS.filter(
                      (a) =>
                        !(props.status === 'confirmed' && a.action !== 'dismiss') &&
                        !(props.status === 'ignored' && a.action === 'ignore'),
                    ).map((a) => (
                      <button
                        key={a.action}
                        type="submit"
                        name="action"
                        value={a.action}
                        class={a.class}
                        title={a.help}
                      >
                        {a.label}
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
            More
          </a>
        </p>
      )}
    </AppLayout>
  );
}
