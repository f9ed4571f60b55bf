import type { LinkStats } from '../lib/clicks/link_stats.ts';

const WIDTH = 720;
const HEIGHT = 240;
const PAD = { top: 16, right: 12, bottom: 28, left: 44 };
const SERIES = [
  { key: 'humans', label: 'People', className: 'series-human' },
  { key: 'previews', label: 'Link previews', className: 'series-preview' },
  { key: 'bots', label: 'Bots', className: 'series-bot' },
] as const;

/** A round axis maximum at or above `n`: 1, 2 or 5 times a power of ten. */
function niceMax(n: number): number {
  if (n <= 4) return 4;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= n) return step * power;
  return 10 * power;
}

const shortDay = (day: string) =>
  new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(
    new Date(`${day}T00:00:00Z`),
  );

const VENDOR_NAMES: Record<string, string> = { bitly: 'Bitly' };

/**
 * The vendor's daily counts as line segments over the bars (a day it did not report breaks the line; a lone
 * day is a dot), so ours and the vendor's read together.
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
 */
export function ClicksChart(props: { stats: LinkStats }) {
  const vendorByDay = new Map(props.stats.vendor?.byDay.map((d) => [d.day, d.vendorClicks]) ?? []);
  const vendorName = props.stats.vendor
    ? (VENDOR_NAMES[props.stats.vendor.name] ?? props.stats.vendor.name)
    : null;
  const days = props.stats.byDay.map((d) => ({
    day: d.day,
    humans: d.humanClicks + d.qrScans,
    previews: d.previews,
    bots: d.botHits,
    vendor: vendorByDay.get(d.day) ?? null,
  }));
  const hasVendor = vendorName !== null && days.some((d) => d.vendor !== null);
  const max = niceMax(
    Math.max(0, ...days.map((d) => Math.max(d.humans + d.previews + d.bots, d.vendor ?? 0))),
  );
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(2, Math.min(28, slot * 0.7));
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const labelEvery = Math.max(1, Math.ceil(days.length / 8));
  const total = props.stats.clicks + props.stats.previews + props.stats.botHits;
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-labelledby="chart-title chart-desc"
        preserveAspectRatio="xMidYMid meet"
      >
        <title id="chart-title">Clicks per day</title>
        <desc id="chart-desc">
          {`${days.length} days from ${days[0]?.day ?? ''} to ${days[days.length - 1]?.day ?? ''}: ` +
            `${props.stats.clicks} by people, ${props.stats.previews} link previews, ${props.stats.botHits} by bots.` +
            (hasVendor
              ? ` ${vendorName} counted ${props.stats.vendor!.clicks} on the days it reported.`
              : '')}
        </desc>
        {[0, 0.25, 0.5, 0.75, 1].map((f) => (
          <g key={f} class="gridline">
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(max * f)} y2={y(max * f)} />
            <text x={PAD.left - 8} y={y(max * f) + 4} text-anchor="end" class="axis-label">
              {Math.round(max * f).toLocaleString('en')}
            </text>
          </g>
        ))}
        {days.map((d, i) => {
          const x = PAD.left + i * slot + (slot - barW) / 2;
          let base = 0;
          return (
            <g key={d.day} class="bar">
              <title>
                {`${shortDay(d.day)}: ${d.humans} people, ${d.previews} previews, ${d.bots} bots` +
                  (hasVendor ? `; ${vendorName}: ${d.vendor ?? 'not pulled'}` : '')}
              </title>
              {SERIES.map((s) => {
                const value = d[s.key];
                const top = y(base + value);
                const height = y(base) - top;
                base += value;
                return value > 0 ? (
                  <rect key={s.key} class={s.className} x={x} y={top} width={barW} height={height} rx={1.5} />
                ) : null;
              })}
              <rect class="bar-hit" x={PAD.left + i * slot} y={PAD.top} width={slot} height={plotH} />
              {i % labelEvery === 0 && (
                <text x={x + barW / 2} y={HEIGHT - 8} text-anchor="middle" class="axis-label">
                  {shortDay(d.day)}
                </text>
              )}
            </g>
          );
        })}
        {hasVendor && (
          <VendorLine
            values={days.map((d) => d.vendor)}
            x={(i) => PAD.left + i * slot + slot / 2}
            y={y}
            label={`${vendorName} per day`}
          />
        )}
        {total === 0 && !hasVendor && (
          <text x={PAD.left + plotW / 2} y={PAD.top + plotH / 2} text-anchor="middle" class="chart-empty">
            No clicks in this period yet
          </text>
        )}
      </svg>
      <figcaption class="legend">
        {SERIES.map((s) => (
          <span key={s.key} class="legend-item">
            <span class={`swatch ${s.className}`} aria-hidden="true" />
            {s.label}
          </span>
        ))}
        {hasVendor && (
          <span class="legend-item">
            <span class="swatch series-vendor" aria-hidden="true" />
            {vendorName} (its own count)
          </span>
        )}
      </figcaption>
      <details class="chart-table">
        <summary>Show the numbers</summary>
        <table class="compact-table">
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">People</th>
              <th scope="col">Previews</th>
              <th scope="col">Bots</th>
              {hasVendor && <th scope="col">{vendorName}</th>}
            </tr>
          </thead>
          <tbody>
            {days.map((d) => (
              <tr key={d.day}>
                <th scope="row">{d.day}</th>
                <td>{d.humans}</td>
                <td>{d.previews}</td>
                <td>{d.bots}</td>
                {hasVendor && <td>{d.vendor ?? '—'}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
