// A link's clicks over a chosen period: totals, the chart, top countries and referrers, browsers and operating
// systems, CSV downloads.
import type { LinkStats } from '../../lib/clicks/link_stats.ts';
import type { I18n } from '../../lib/i18n/translator.ts';
import { ClicksChart } from '../ClicksChart.tsx';
import { ClicksCsvLinks } from '../ExportLinks.tsx';
import { useI18n } from '../I18n.tsx';
import { vendorName } from '../link_fields.ts';

/** The periods a link's statistics are shown over, in days. */
export const STATS_RANGES = [7, 30, 90] as const;

/** "FR" → "France (FR)"; null → "Unknown". */
function countryName(i18n: I18n, code: string | null): string {
  if (!code) return i18n.t('common.unknown');
  return i18n.t('detail.country', { name: i18n.region(code), code });
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

/** A chosen window of the stats: the form's dates (the editor's days), and its problem if it was refused. */
export interface StatsWindow {
  from: string;
  to: string;
  custom: boolean;
  error?: string | undefined;
}

/** The clicks card. */
export function ClicksCard(props: { code: string; stats: LinkStats; days: number; window?: StatsWindow }) {
  const i18n = useI18n();
  const { t } = i18n;
  const { stats } = props;
  return (
    <section class="card" aria-labelledby="clicks-title">
      <div class="card-header">
        <h2 id="clicks-title">{t('detail.clicks')}</h2>
        <nav class="segmented" aria-label={t('detail.period')}>
          {STATS_RANGES.map((d) => (
            <a
              key={d}
              href={`/ui/links/${encodeURIComponent(props.code)}?days=${d}#clicks-title`}
              aria-current={props.days === d && !props.window?.custom ? 'true' : undefined}
            >
              {t('detail.days', { days: d })}
            </a>
          ))}
        </nav>
      </div>
      {props.window && (
        <form
          method="get"
          action={`/ui/links/${encodeURIComponent(props.code)}#clicks-title`}
          class="range-form"
          aria-label={t('detail.range')}
        >
          <div class={`field field-compact${props.window.error ? ' has-error' : ''}`}>
            <label for="stats-from">{t('detail.rangeFrom')}</label>
            <input
              id="stats-from"
              name="from"
              type="date"
              value={props.window.from}
              required
              aria-invalid={props.window.error ? 'true' : undefined}
            />
          </div>
          <div class="field field-compact">
            <label for="stats-to">{t('detail.rangeTo')}</label>
            <input id="stats-to" name="to" type="date" value={props.window.to} required />
          </div>
          <button type="submit" class="btn btn-secondary btn-sm">
            {t('detail.rangeShow')}
          </button>
          {props.window.error && (
            <p class="field-message is-error range-error" role="alert">
              ✗ {props.window.error}
            </p>
          )}
        </form>
      )}
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
      <div class="grid-2">
        <TopList
          title={t('detail.topBrowsers')}
          // Product names (Chrome, iOS…) stay as they are in every language: isolated, their own direction.
          rows={stats.byBrowser.map((b) => ({
            label: t(`family.browser.${b.family}`),
            clicks: b.clicks,
            dir: 'auto' as const,
          }))}
          empty={t('detail.noBrowsers')}
        />
        <TopList
          title={t('detail.topSystems')}
          rows={stats.byOs.map((o) => ({
            label: t(`family.os.${o.family}`),
            clicks: o.clicks,
            dir: 'auto' as const,
          }))}
          empty={t('detail.noSystems')}
        />
      </div>
      <p class="muted small">{t('detail.familiesDays')}</p>
      <ClicksCsvLinks code={props.code} days={props.days} />
    </section>
  );
}
