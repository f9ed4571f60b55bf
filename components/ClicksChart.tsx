import type { LinkStats } from '../lib/clicks/link_stats.ts';
import { useI18n } from './I18n.tsx';
import { vendorName } from './link_fields.ts';

const WIDTH = 720;
const HEIGHT = 240;
/** Room for the value axis (at the inline start) and the day labels (below). */
const PAD = { top: 16, end: 12, bottom: 28, start: 44 };
const SERIES = [
  { key: 'humans', label: 'chart.people', className: 'series-human' },
  { key: 'previews', label: 'chart.previews', className: 'series-preview' },
  { key: 'bots', label: 'chart.bots', className: 'series-bot' },
] as const;

/** A round axis maximum at or above `n`: 1, 2 or 5 times a power of ten. */
function niceMax(n: number): number {
  if (n <= 4) return 4;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= n) return step * power;
  return 10 * power;
}

/**
 * The vendor's daily counts as line segments over the bars (a day it did not report breaks the line; a lone
 * day is a dot), so ours and the vendor's read together. `x` places a day's slot centre (mirrored on RTL pages).
 */
function VendorLine(props: {
  values: (number | null)[];
  x: (i: number) => number;
  y: (v: number) => number;
  label: string;
}) {
  const runs: { i: number; v: number }[][] = [];
  let run: { i: number; v: number }[] = [];
  props.values.forEach((v, i) => {
    if (v === null) {
      if (run.length > 0) runs.push(run);
      run = [];
    } else run.push({ i, v });
  });
  if (run.length > 0) runs.push(run);
  return (
    <g class="vendor-series" aria-label={props.label}>
      {runs.map((r) =>
        r.length > 1 ? (
          <polyline
            key={r[0]!.i}
            class="vendor-line"
            points={r.map((p) => `${props.x(p.i).toFixed(1)},${props.y(p.v).toFixed(1)}`).join(' ')}
          />
        ) : null,
      )}
      {runs.flat().map((p) => (
        <circle key={p.i} class="vendor-dot" cx={props.x(p.i)} cy={props.y(p.v)} r={2.5} />
      ))}
    </g>
  );
}

/**
 * Daily clicks as stacked bars (people — QR scans included —, link previews, bots), drawn on the server as
 * SVG: no script, readable by screen readers through its description and the table beside it. When a vendor
 * (Bitly) reports on the link, its own daily count is a line over the bars: ours and theirs, the same days.
 * On a right-to-left page the chart is mirrored — time runs from right to left and the value axis stands at
 * the right, where reading starts — while its numbers and labels stay upright.
 */
export function ClicksChart(props: { stats: LinkStats }) {
  const i18n = useI18n();
  const { t } = i18n;
  const rtl = i18n.dir === 'rtl';
  const vendorByDay = new Map(props.stats.vendor?.byDay.map((d) => [d.day, d.vendorClicks]) ?? []);
  const vendor = props.stats.vendor ? vendorName(i18n, props.stats.vendor.name) : null;
  const days = props.stats.byDay.map((d) => ({
    day: d.day,
    humans: d.humanClicks + d.qrScans,
    previews: d.previews,
    bots: d.botHits,
    vendor: vendorByDay.get(d.day) ?? null,
  }));
  const hasVendor = vendor !== null && days.some((d) => d.vendor !== null);
  const vendorLabel = vendor ?? '';
  const max = niceMax(
    Math.max(0, ...days.map((d) => Math.max(d.humans + d.previews + d.bots, d.vendor ?? 0))),
  );
  const plotW = WIDTH - PAD.start - PAD.end;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(2, Math.min(28, slot * 0.7));
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  /** An x position measured from the inline start, in SVG coordinates. */
  const x = (fromStart: number, width = 0) => (rtl ? WIDTH - fromStart - width : fromStart);
  const labelEvery = Math.max(1, Math.ceil(days.length / 8));
  const total = props.stats.clicks + props.stats.previews + props.stats.botHits;
  const axisX = x(PAD.start - 8);
  const desc = t('chart.desc', {
    days: days.length,
    from: days[0] ? i18n.day(days[0].day) : '',
    to: days.length > 0 ? i18n.day(days[days.length - 1]!.day) : '',
    people: props.stats.clicks,
    previews: props.stats.previews,
    bots: props.stats.botHits,
  });
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-labelledby="chart-title chart-desc"
        preserveAspectRatio="xMidYMid meet"
      >
        <title id="chart-title">{t('chart.title')}</title>
        <desc id="chart-desc">
          {hasVendor
            ? `${desc} ${t('chart.descVendor', { vendor: vendorLabel, clicks: props.stats.vendor!.clicks })}`
            : desc}
        </desc>
        {[0, 0.25, 0.5, 0.75, 1].map((f) => (
          <g key={f} class="gridline">
            <line x1={x(PAD.start)} x2={x(WIDTH - PAD.end)} y1={y(max * f)} y2={y(max * f)} />
            <text
              x={axisX}
              y={y(max * f) + 4}
              text-anchor="end"
              direction={rtl ? 'rtl' : 'ltr'}
              class="axis-label"
            >
              {i18n.number(Math.round(max * f))}
            </text>
          </g>
        ))}
        {days.map((d, i) => {
          const left = x(PAD.start + i * slot + (slot - barW) / 2, barW);
          const bar = { day: i18n.day(d.day), people: d.humans, previews: d.previews, bots: d.bots };
          let base = 0;
          return (
            <g key={d.day} class="bar">
              <title>
                {!hasVendor
                  ? t('chart.bar', bar)
                  : d.vendor === null
                    ? t('chart.barVendorMissing', { ...bar, vendor: vendorLabel })
                    : t('chart.barVendor', { ...bar, vendor: vendorLabel, vendorClicks: d.vendor })}
              </title>
              {SERIES.map((s) => {
                const value = d[s.key];
                const top = y(base + value);
                const height = y(base) - top;
                base += value;
                return value > 0 ? (
                  <rect
                    key={s.key}
                    class={s.className}
                    x={left}
                    y={top}
                    width={barW}
                    height={height}
                    rx={1.5}
                  />
                ) : null;
              })}
              <rect
                class="bar-hit"
                x={x(PAD.start + i * slot, slot)}
                y={PAD.top}
                width={slot}
                height={plotH}
              />
              {i % labelEvery === 0 && (
                <text x={left + barW / 2} y={HEIGHT - 8} text-anchor="middle" class="axis-label">
                  {i18n.day(d.day)}
                </text>
              )}
            </g>
          );
        })}
        {hasVendor && (
          <VendorLine
            values={days.map((d) => d.vendor)}
            x={(i) => x(PAD.start + i * slot + slot / 2)}
            y={y}
            label={t('chart.vendorSeries', { vendor: vendorLabel })}
          />
        )}
        {total === 0 && !hasVendor && (
          <text x={x(PAD.start + plotW / 2)} y={PAD.top + plotH / 2} text-anchor="middle" class="chart-empty">
            {t('chart.empty')}
          </text>
        )}
      </svg>
      <figcaption class="legend">
        {SERIES.map((s) => (
          <span key={s.key} class="legend-item">
            <span class={`swatch ${s.className}`} aria-hidden="true" />
            {t(s.label)}
          </span>
        ))}
        {hasVendor && (
          <span class="legend-item">
            <span class="swatch series-vendor" aria-hidden="true" />
            {t('chart.vendorLegend', { vendor: vendorLabel })}
          </span>
        )}
      </figcaption>
      <details class="chart-table">
        <summary>{t('chart.showNumbers')}</summary>
        <table class="compact-table">
          <thead>
            <tr>
              <th scope="col">{t('chart.day')}</th>
              <th scope="col">{t('chart.people')}</th>
              <th scope="col">{t('chart.previewsShort')}</th>
              <th scope="col">{t('chart.bots')}</th>
              {hasVendor && <th scope="col">{vendor}</th>}
            </tr>
          </thead>
          <tbody>
            {days.map((d) => (
              <tr key={d.day}>
                <th scope="row">{i18n.day(d.day)}</th>
                <td class="num">{i18n.number(d.humans)}</td>
                <td class="num">{i18n.number(d.previews)}</td>
                <td class="num">{i18n.number(d.bots)}</td>
                {hasVendor && <td class="num">{d.vendor === null ? '—' : i18n.number(d.vendor)}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
