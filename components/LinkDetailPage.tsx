import CopyButton from '../islands/CopyButton.tsx';
import type { UiSession } from '../lib/auth/sessions.ts';
import type { LinkStats } from '../lib/clicks/link_stats.ts';
import type { Link, StoredLink as LinkRow } from '../lib/links/link.ts';
import type { LinkHistoryEntry as AuditRow } from '../lib/links/link_history.ts';
import { describeTimeZone, formatDateTime } from '../lib/ui/time_zone.ts';
import { AppLayout } from './AppLayout.tsx';
import { AuditHistory, describeActor } from './AuditHistory.tsx';
import { SafetyBadge, STATUS_TEXT, StatusBadge, VendorStateBadge } from './Badge.tsx';
import { ClicksChart } from './ClicksChart.tsx';
import { ClicksCsvLinks } from './ExportLinks.tsx';
import { CsrfField, ErrorSummary, Notice, SelectField, TextField } from './Field.tsx';
import { Island } from './Island.tsx';
import { LINK_FIELD_LABELS, REDIRECT_OPTIONS } from './NewLinkPage.tsx';
import { UtmFields } from './UtmFields.tsx';
import { VendorComparison } from './VendorComparison.tsx';

export const STATS_RANGES = [7, 30, 90] as const;

const ORIGIN_TEXT: Record<Link['origin'], string> = {
  api: 'through the API',
  ui: 'in the editor',
  wordpress: 'at publish in WordPress',
  import: 'imported',
};
const VENDOR_NAMES: Record<string, string> = { bitly: 'Bitly', inhouse: 'In-house resolver' };
const withoutScheme = (url: string) => url.replace(/^https?:\/\//, '');
const regions = new Intl.DisplayNames(['en'], { type: 'region' });

/** "FR" → "France (FR)"; null → "Unknown". */
function countryName(code: string | null): string {
  if (!code) return 'Unknown';
  try {
    return `${regions.of(code) ?? code} (${code})`;
  } catch {
    return code;
  }
}

function Fact(props: { label: string; children: preact.ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}

function TopList(props: { title: string; rows: { label: string; clicks: number }[]; empty: string }) {
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
              <th scope="col">Clicks</th>
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
                  {r.label}
                </th>
                <td class="num">{r.clicks.toLocaleString('en')}</td>
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
  /** Open reader reports of the link (issue 13): its editors are told on its page. */
  readerReports?: { open: number; reasons: string[] } | undefined;
  /** UTM_PARAMS, shown beside the link's own UTM fields. */
  deploymentUtm?: string | undefined;
}) {
  const { link, stats, timeZone } = props;
  const qrBase = `/ui/links/${encodeURIComponent(link.code)}/qr`;
  const editable = link.status === 'active' || link.status === 'gone';
  const statusOptions = [
    ...(editable ? [] : [{ value: '', label: `Keep: ${STATUS_TEXT[link.status]}` }]),
    { value: 'active', label: 'Active — redirects readers' },
    { value: 'gone', label: 'Retired — answers 410 Gone' },
  ];
  const { values, errors } = props.edit;
  // The creation entry names a person; the owner column only holds an id.
  const creator =
    [...props.audit].reverse().find((e) => e.action === 'link.created' || e.action === 'link.minted')
      ?.actor ?? props.row.owner;
  return (
    <AppLayout title={link.code} session={props.session} section="links">
      <div class="page-header">
        <div class="min-w-0">
          <p class="breadcrumb">
            <a href="/ui/links">Links</a> /
          </p>
          <h1 class="short-url-heading">
            <span class="visually-hidden">Short link </span>
            {withoutScheme(link.shortUrl)}
          </h1>
          <div class="header-badges">
            <StatusBadge status={link.status} />
            <SafetyBadge safety={link.safety} />
            {link.tags.map((t) => (
              <a key={t} class="tag" href={`/ui/links?tag=${encodeURIComponent(t)}`}>
                {t}
              </a>
            ))}
          </div>
        </div>
        <div class="header-actions">
          <Island
            name="CopyButton"
            component={CopyButton}
            props={{ text: link.shortUrl, label: 'Copy link' }}
          />
          <a class="btn btn-secondary btn-sm" href={link.shortUrl} target="_blank" rel="noopener noreferrer">
            Open ↗
          </a>
          <a
            class="btn btn-secondary btn-sm"
            href={`${link.shortUrl}+`}
            target="_blank"
            rel="noopener noreferrer"
          >
            Preview page
          </a>
        </div>
      </div>

      {props.notice && (
        <Notice tone={props.notice.tone} title={props.notice.title}>
          {props.notice.text && <p>{props.notice.text}</p>}
        </Notice>
      )}
      {props.readerReports && props.readerReports.open > 0 && (
        <Notice
          tone="warn"
          title={`Readers reported this link (${props.readerReports.open} open report${props.readerReports.open === 1 ? '' : 's'})`}
        >
          <p id="reader-reports">
            {props.readerReports.reasons.length > 0 &&
              `They said: ${props.readerReports.reasons.join('; ')}. `}
            An administrator reviews reports in the moderation queue
            {props.session.user.role === 'admin' && (
              <>
                {' '}
                (<a href="/ui/reports">Reports</a>)
              </>
            )}
            ; three readers put a link behind the warning page until then.
          </p>
        </Notice>
      )}

      <div class="detail-grid">
        <div class="stack">
          <section class="card" aria-labelledby="destination-title">
            <h2 id="destination-title">Destination</h2>
            <p class="destination">
              <a href={link.url} target="_blank" rel="noopener noreferrer" class="url-break">
                {link.url}
              </a>
            </p>
            {link.title && <p class="muted">{link.title}</p>}
            <dl class="facts">
              <Fact label="Expires">
                {link.expiresAt ? formatDateTime(new Date(link.expiresAt), timeZone) : 'Never'}
              </Fact>
              <Fact label="After expiry">
                {link.expiredUrl ? <span class="url-break">{link.expiredUrl}</span> : '“Link expired” page'}
              </Fact>
              <Fact label="Redirect">
                {link.redirectStatus ? String(link.redirectStatus) : 'Deployment default'}
              </Fact>
              {link.utm && (
                <Fact label="Campaign tracking">
                  {Object.entries(link.utm)
                    .map(([k, v]) => `utm_${k}=${v}`)
                    .join(' · ')}
                </Fact>
              )}
              <Fact label="Made by">
                {describeActor(creator)} · {ORIGIN_TEXT[link.origin]}
              </Fact>
              {link.site && (
                <Fact label="Article">
                  {link.site} #{link.postId}
                </Fact>
              )}
              <Fact label="Created">{formatDateTime(new Date(link.createdAt), timeZone)}</Fact>
              <Fact label="Last change">{formatDateTime(new Date(link.updatedAt), timeZone)}</Fact>
            </dl>
          </section>

          <section class="card" aria-labelledby="clicks-title">
            <div class="card-header">
              <h2 id="clicks-title">Clicks</h2>
              <nav class="segmented" aria-label="Period">
                {STATS_RANGES.map((d) => (
                  <a
                    key={d}
                    href={`/ui/links/${encodeURIComponent(link.code)}?days=${d}#clicks-title`}
                    aria-current={props.days === d ? 'true' : undefined}
                  >
                    {d} days
                  </a>
                ))}
              </nav>
            </div>
            <div class="stat-row">
              <div class="stat">
                <span class="stat-value">{stats.clicks.toLocaleString('en')}</span>
                <span class="stat-label">People</span>
              </div>
              <div class="stat">
                <span class="stat-value">{stats.qrScans.toLocaleString('en')}</span>
                <span class="stat-label">of them by QR</span>
              </div>
              <div class="stat">
                <span class="stat-value">{stats.previews.toLocaleString('en')}</span>
                <span class="stat-label">Link previews</span>
              </div>
              <div class="stat">
                <span class="stat-value">{stats.botHits.toLocaleString('en')}</span>
                <span class="stat-label">Bots</span>
              </div>
              {stats.vendor && (
                <div class="stat">
                  <span class="stat-value">{stats.vendor.clicks.toLocaleString('en')}</span>
                  <span class="stat-label">
                    Counted by {VENDOR_NAMES[stats.vendor.name] ?? stats.vendor.name} (
                    {stats.vendor.comparedDays} days)
                  </span>
                </div>
              )}
            </div>
            <ClicksChart stats={stats} />
            <div class="grid-2">
              <TopList
                title="Top countries"
                rows={stats.byCountry.map((c) => ({ label: countryName(c.country), clicks: c.clicks }))}
                empty="No country data yet."
              />
              <TopList
                title="Top referrers"
                rows={stats.byReferrer.map((r) => ({
                  label: r.host ?? 'Direct or hidden',
                  clicks: r.clicks,
                }))}
                empty="No referrers yet."
              />
            </div>
            <ClicksCsvLinks code={link.code} days={props.days} />
          </section>

          {stats.vendor && <VendorComparison comparison={stats.vendor} timeZone={timeZone} />}

          <section class="card" aria-labelledby="edit-title" id="edit">
            <h2 id="edit-title">Edit</h2>
            <p class="muted">
              Changes reach every cache and vendor within seconds, and are kept in the history below.
            </p>
            <form
              method="post"
              action={`/ui/links/${encodeURIComponent(link.code)}/edit`}
              class="stack"
              novalidate
            >
              <CsrfField token={props.session.csrfToken} />
              <input type="hidden" name="version" value={values.version ?? String(props.row.version)} />
              <input type="hidden" name="expiresAtShown" value={values.expiresAtShown ?? ''} />
              <ErrorSummary errors={errors} labels={LINK_FIELD_LABELS} />
              <TextField
                name="url"
                label="Destination URL"
                type="url"
                value={values.url}
                error={errors.url}
                required
              />
              <div class="grid-2">
                <SelectField
                  name="status"
                  label="Status"
                  value={values.status}
                  error={errors.status}
                  options={statusOptions}
                  required
                />
                <SelectField
                  name="redirectStatus"
                  label="Redirect type"
                  value={values.redirectStatus}
                  error={errors.redirectStatus}
                  options={REDIRECT_OPTIONS}
                />
              </div>
              <div class="grid-2">
                <TextField
                  name="expiresAt"
                  label="Expires at"
                  type="datetime-local"
                  value={values.expiresAt}
                  error={errors.expiresAt}
                  hint={`Empty: never. Your time zone: ${describeTimeZone(timeZone)}.`}
                />
                <TextField
                  name="expiredUrl"
                  label="After expiry, send readers to"
                  type="url"
                  value={values.expiredUrl}
                  error={errors.expiredUrl}
                />
              </div>
              <TextField
                name="tags"
                label="Tags"
                value={values.tags}
                error={errors.tags}
                hint="Separate tags with commas."
              />
              <UtmFields values={values} errors={errors} deploymentUtm={props.deploymentUtm} />
              <TextField
                name="reason"
                label="Reason for the change"
                value={values.reason}
                error={errors.reason}
                required
                maxLength={500}
                placeholder="e.g. The article moved to a new URL"
                hint="Kept in the history, so colleagues know why."
              />
              <div class="form-actions">
                <button type="submit" class="btn btn-primary">
                  Save changes
                </button>
              </div>
            </form>
          </section>

          <section class="card" aria-labelledby="history-title">
            <h2 id="history-title">History</h2>
            <AuditHistory entries={props.audit} timeZone={timeZone} />
          </section>
        </div>

        <aside class="stack">
          <section class="card qr-card" aria-labelledby="qr-title">
            <h2 id="qr-title">QR code</h2>
            <img
              src={`${qrBase}.svg`}
              width={200}
              height={200}
              alt={`QR code that opens ${withoutScheme(link.shortUrl)}`}
              class="qr"
            />
            <p class="muted small">Scans are counted separately from clicks.</p>
            <div class="button-row">
              <a
                class="btn btn-secondary btn-sm"
                href={`${qrBase}.svg?download=1`}
                download={`${link.code}-qr.svg`}
              >
                Download SVG
              </a>
              <a
                class="btn btn-secondary btn-sm"
                href={`${qrBase}.png?download=1`}
                download={`${link.code}-qr.png`}
              >
                Download PNG
              </a>
            </div>
          </section>

          <section class="card" aria-labelledby="safety-title">
            <h2 id="safety-title">Safety</h2>
            <p>
              <SafetyBadge safety={link.safety} />
            </p>
            {props.row.safetyReason && <p>{props.row.safetyReason}</p>}
            <p class="muted small">
              {props.row.safetyCheckedAt
                ? `Last checked ${formatDateTime(props.row.safetyCheckedAt, timeZone)}.`
                : 'Not scanned yet.'}
            </p>
          </section>

          <section class="card" aria-labelledby="replicas-title">
            <h2 id="replicas-title">Where it is served</h2>
            {link.vendors.length === 0 ? (
              <p class="muted small">No vendor copy yet: our own resolver answers this link.</p>
            ) : (
              <ul class="replicas">
                {link.vendors.map((v) => (
                  <li key={v.name}>
                    <div class="replica-head">
                      <strong>{VENDOR_NAMES[v.name] ?? v.name}</strong>
                      <VendorStateBadge state={v.state} />
                    </div>
                    <span class="muted small">
                      {v.syncedAt
                        ? `Synced ${formatDateTime(new Date(v.syncedAt), timeZone)}`
                        : 'Never synced'}
                    </span>
                    {v.error && <p class="small error-text">{v.error}</p>}
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
                Workflows in Temporal UI ↗
              </a>
            ) : (
              <p class="muted small">
                Workflows: search <code>{props.temporal.query}</code> in Temporal UI (set TEMPORAL_UI_URL to
                link it).
              </p>
            )}
          </section>

          <section class="card danger-zone" aria-labelledby="delete-title">
            <h2 id="delete-title">Delete</h2>
            <p class="small">Readers then get “410 Gone”. The code is never reused. This cannot be undone.</p>
            <form method="post" action={`/ui/links/${encodeURIComponent(link.code)}/delete`} class="stack">
              <CsrfField token={props.session.csrfToken} />
              <TextField
                name="confirm"
                id="delete-confirm"
                label={`Type “${link.code}” to confirm`}
                required
                error={props.deleteError}
              />
              <TextField name="reason" id="delete-reason" label="Reason" />
              <button type="submit" class="btn btn-danger">
                Delete link
              </button>
            </form>
          </section>
        </aside>
      </div>
    </AppLayout>
  );
}
