import type { LinkStats } from '../lib/clicks/link_stats.ts';
import { useI18n } from './I18n.tsx';

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
 * Daily clicks as stacked bars (people — QR scans included —, link previews, bots), drawn on the server as
 * SVG: no script, readable by screen readers through its description and the table beside it. On a
 * right-to-left page the chart is mirrored — time runs from right to left and the value axis stands at the
 * right, where reading starts — while its numbers and labels stay upright.
 */
export function ClicksChart(props: { stats: LinkStats }) {
  const i18n = useI18n();
  const { t } = i18n;
  const rtl = i18n.dir === 'rtl';
  const days = props.stats.byDay.map((d) => ({
    day: d.day,
    humans: d.humanClicks + d.qrScans,
    previews: d.previews,
    bots: d.botHits,
  }));
  const max = niceMax(Math.max(0, ...days.map((d) => d.humans + d.previews + d.bots)));
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
          {t('chart.desc', {
            days: days.length,
            from: days[0] ? i18n.day(days[0].day) : '',
            to: days.length > 0 ? i18n.day(days[days.length - 1]!.day) : '',
            people: props.stats.clicks,
            previews: props.stats.previews,
            bots: props.stats.botHits,
          })}
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
          let base = 0;
          return (
            <g key={d.day} class="bar">
              <title>
                {t('chart.bar', {
                  day: i18n.day(d.day),
                  people: d.humans,
                  previews: d.previews,
                  bots: d.bots,
                })}
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
        {total === 0 && (
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
            </tr>
          </thead>
          <tbody>
            {days.map((d) => (
              <tr key={d.day}>
                <th scope="row">{i18n.day(d.day)}</th>
                <td class="num">{i18n.number(d.humans)}</td>
                <td class="num">{i18n.number(d.previews)}</td>
                <td class="num">{i18n.number(d.bots)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
