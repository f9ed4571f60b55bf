// /ui/dashboard: the newsroom's clicks at a glance (lib/clicks/newsroom_dashboard.ts, ADR 0079). Plain links
// choose the window, so the page works without JavaScript.
import type { UiSession } from '../lib/auth/sessions.ts';
import {
  DASHBOARD_WINDOWS,
  type DashboardWindow,
  type GroupRow,
  type NewsroomDashboard,
} from '../lib/clicks/newsroom_dashboard.ts';
import { AppLayout } from './AppLayout.tsx';
import { useI18n } from './I18n.tsx';

/** A grouping's table (tags, sites, domains): the name, its clicked links and their clicks. */
/** One family breakdown (browsers or systems): product names isolated in their own direction. */
function FamilyTable(props: {
  id: string;
  keyLabel: string;
  rows: { key: string; label: string; clicks: number }[];
}) {
  const i18n = useI18n();
  const { t } = i18n;
  if (props.rows.length === 0)
    return (
      <p class="muted" id={props.id}>
        {t('dashboard.none')}
      </p>
    );
  return (
    <table class="data-table" id={props.id}>
      <thead>
        <tr>
          <th scope="col">{props.keyLabel}</th>
          <th scope="col">{t('dashboard.col.clicks')}</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((r) => (
          <tr key={r.key} data-key={r.key}>
            <td>
              <bdi dir="auto">{r.label}</bdi>
            </td>
            <td data-clicks={r.clicks}>{i18n.number(r.clicks)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function GroupTable(props: {
  id: string;
  title: string;
  keyLabel: string;
  rows: GroupRow[];
  name: (key: string | null) => string;
}) {
  const i18n = useI18n();
  const { t } = i18n;
  return (
    <section class="card" aria-labelledby={`${props.id}-title`} id={props.id}>
      <div class="card-header">
        <h2 id={`${props.id}-title`}>{props.title}</h2>
      </div>
      {props.rows.length === 0 ? (
        <p class="muted">{t('dashboard.none')}</p>
      ) : (
        <table class="data-table">
          <thead>
            <tr>
              <th scope="col">{props.keyLabel}</th>
              <th scope="col">{t('dashboard.col.links')}</th>
              <th scope="col">{t('dashboard.col.clicks')}</th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((r) => (
              <tr key={r.key ?? ''} data-key={r.key ?? ''}>
                <td>
                  <bdi dir="auto">{props.name(r.key)}</bdi>
                </td>
                <td data-links={r.links}>{i18n.number(r.links)}</td>
                <td data-clicks={r.clicks}>{i18n.number(r.clicks)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function DashboardPage(props: {
  session: UiSession;
  dashboard: NewsroomDashboard;
  /** Host names of the configured short domains, the default first. */
  shortDomains: readonly string[];
}) {
  const i18n = useI18n();
  const { t } = i18n;
  const d = props.dashboard;
  const windowName = (w: DashboardWindow) => t(`dashboard.window.${w}`);
  return (
    <AppLayout title={t('dashboard.title')} session={props.session} section="dashboard">
      <div class="page-header">
        <div>
          <h1>{t('dashboard.title')}</h1>
          <p class="muted">{t('dashboard.lead', { time: i18n.dateTime(d.at) })}</p>
        </div>
      </div>

      <section class="card" aria-labelledby="dashboard-totals-title" id="dashboard-totals">
        <div class="card-header">
          <h2 id="dashboard-totals-title">{t('dashboard.totals')}</h2>
        </div>
        <table class="data-table">
          <thead>
            <tr>
              <th scope="col">{t('dashboard.col.window')}</th>
              <th scope="col">{t('dashboard.col.ours')}</th>
              <th scope="col">{t('dashboard.col.bitly')}</th>
              <th scope="col">{t('dashboard.col.oursSameDays')}</th>
            </tr>
          </thead>
          <tbody>
            {d.totals.map((w) => (
              <tr key={w.window} data-window={w.window}>
                <th scope="row">{windowName(w.window)}</th>
                <td data-ours={w.clicks}>{i18n.number(w.clicks)}</td>
                {w.bitly ? (
                  <>
                    <td data-bitly={w.bitly.clicks}>
                      {i18n.number(w.bitly.clicks)}{' '}
                      <span class="muted small">{t('dashboard.bitlyDays', { days: w.bitly.days })}</span>
                    </td>
                    <td data-ours-same-days={w.bitly.ourClicksSameDays}>
                      {i18n.number(w.bitly.ourClicksSameDays)}
                    </td>
                  </>
                ) : (
                  <>
                    <td data-bitly="">{t('dashboard.bitlyNone')}</td>
                    <td>—</td>
                  </>
                )}
              </tr>
            ))}
          </tbody>
        </table>
        <p class="muted small" id="dashboard-bitly-note">
          {t('dashboard.bitlyNote')}
        </p>
      </section>

      <nav class="card" aria-label={t('dashboard.windowNav')} id="dashboard-window">
        <p>
          {t('dashboard.windowChoose')}{' '}
          {DASHBOARD_WINDOWS.map((w) => (
            <>
              <a
                key={w}
                class="btn btn-ghost btn-sm"
                href={`/ui/dashboard?window=${w}`}
                aria-current={w === d.window ? 'page' : undefined}
              >
                {windowName(w)}
              </a>{' '}
            </>
          ))}
        </p>
      </nav>

      <section class="card" aria-labelledby="dashboard-top-title" id="dashboard-top">
        <div class="card-header">
          <h2 id="dashboard-top-title">{t('dashboard.top', { window: windowName(d.window) })}</h2>
        </div>
        {d.topLinks.length === 0 ? (
          <p class="muted">{t('dashboard.none')}</p>
        ) : (
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">{t('dashboard.col.code')}</th>
                <th scope="col">{t('dashboard.col.title')}</th>
                <th scope="col">{t('dashboard.col.clicks')}</th>
              </tr>
            </thead>
            <tbody>
              {d.topLinks.map((l) => (
                <tr key={l.code} data-code={l.code}>
                  <td>
                    <a class="code-link" dir="ltr" href={`/ui/links/${encodeURIComponent(l.code)}`}>
                      {l.code}
                    </a>
                  </td>
                  <td>
                    <bdi dir="auto">{l.title ?? '—'}</bdi>
                  </td>
                  <td data-clicks={l.clicks}>{i18n.number(l.clicks)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <div class="grid-2">
        <GroupTable
          id="dashboard-tags"
          title={t('dashboard.byTag', { window: windowName(d.window) })}
          keyLabel={t('dashboard.col.tag')}
          rows={d.byTag}
          name={(k) => k ?? ''}
        />
        <GroupTable
          id="dashboard-sites"
          title={t('dashboard.bySite', { window: windowName(d.window) })}
          keyLabel={t('dashboard.col.site')}
          rows={d.bySite}
          name={(k) => k ?? t('dashboard.noSite')}
        />
      </div>
      {props.shortDomains.length > 1 && (
        <GroupTable
          id="dashboard-domains"
          title={t('dashboard.byDomain', { window: windowName(d.window) })}
          keyLabel={t('dashboard.col.domain')}
          rows={d.byDomain}
          name={(k) => (k === '' || k === null ? props.shortDomains[0]! : k)}
        />
      )}

      <section class="card" aria-labelledby="dashboard-families-title" id="dashboard-families">
        <div class="card-header">
          <h2 id="dashboard-families-title">{t('dashboard.families', { window: windowName(d.window) })}</h2>
        </div>
        <div class="grid-2">
          <FamilyTable
            id="dashboard-browsers"
            keyLabel={t('detail.topBrowsers')}
            rows={d.families.byBrowser.map((b) => ({
              key: b.family,
              label: t(`family.browser.${b.family}`),
              clicks: b.clicks,
            }))}
          />
          <FamilyTable
            id="dashboard-systems"
            keyLabel={t('detail.topSystems')}
            rows={d.families.byOs.map((o) => ({
              key: o.family,
              label: t(`family.os.${o.family}`),
              clicks: o.clicks,
            }))}
          />
        </div>
        <p class="muted small">{t('detail.familiesDays')}</p>
      </section>
    </AppLayout>
  );
}
