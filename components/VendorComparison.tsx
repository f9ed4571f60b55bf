import type { VendorComparison as Comparison } from '../lib/clicks/link_stats.ts';
import { formatDateTime } from '../lib/ui/time_zone.ts';

const VENDOR_NAMES: Record<string, string> = { bitly: 'Bitly' };
const FRONT_TEXT: Record<Comparison['byDay'][number]['front'], string> = {
  inhouse: 'Lifeline',
  bitly: 'Bitly',
  switched: 'Both (switched)',
};

/** A signed difference: "+3", "−3" (a real minus sign), "0". */
export function formatDifference(n: number): string {
  return n > 0 ? `+${n.toLocaleString('en')}` : n < 0 ? `−${(-n).toLocaleString('en')}` : '0';
}

/**
 * Our count of people beside the vendor's own count, for the same UTC days, with the difference and the reasons
 * two honest counters disagree. A view no shortener offers: a shortener shows only its own number.
 */
export function VendorComparison(props: { comparison: Comparison; timeZone: string }) {
  const c = props.comparison;
  const vendor = VENDOR_NAMES[c.name] ?? c.name;
  const days = c.byDay.filter((d) => d.vendorClicks !== null).reverse();
  return (
    <section class="card" aria-labelledby="vendor-title">
      <div class="card-header">
        <h2 id="vendor-title">Ours and {vendor}’s, day by day</h2>
      </div>
      <p class="muted small">
        {c.fetchedAt
          ? `${vendor}’s numbers as of ${formatDateTime(new Date(c.fetchedAt), props.timeZone)}, pulled on a schedule. `
          : `${vendor}’s numbers have not been pulled yet; they appear after the next scheduled pull. `}
        Both sides count whole UTC days. Ours counts people only (human clicks and QR scans), not bots, link
        previews or HEAD requests.
      </p>
      {days.length > 0 && (
        <>
          <div class="stat-row">
            <div class="stat">
              <span class="stat-value">{c.ourClicks.toLocaleString('en')}</span>
              <span class="stat-label">Ours (people)</span>
            </div>
            <div class="stat">
              <span class="stat-value">{c.clicks.toLocaleString('en')}</span>
              <span class="stat-label">{vendor}</span>
            </div>
            <div class="stat">
              <span class="stat-value">{formatDifference(c.difference)}</span>
              <span class="stat-label">Difference (ours − {vendor})</span>
            </div>
            <div class="stat">
              <span class="stat-value">{c.comparedDays}</span>
              <span class="stat-label">Days compared</span>
            </div>
          </div>
          <p class="small">
            Answering the short domain now:{' '}
            <strong>{FRONT_TEXT[c.activeFront.active as 'bitly'] ?? 'Lifeline'}</strong>
            {c.activeFront.since
              ? ` (since ${formatDateTime(new Date(c.activeFront.since), props.timeZone)})`
              : ''}
            . Readers reach whichever front the short domain points at; the other one never sees those clicks.
          </p>
          <table class="compact-table comparison-table">
            <caption class="visually-hidden">Clicks per day, ours and {vendor}’s, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col">Answered by</th>
                <th scope="col">Ours</th>
                <th scope="col">{vendor}</th>
                <th scope="col">Difference</th>
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr key={d.day}>
                  <th scope="row">{d.day}</th>
                  <td>{FRONT_TEXT[d.front]}</td>
                  <td class="num">{d.ourClicks.toLocaleString('en')}</td>
                  <td class="num">{(d.vendorClicks ?? 0).toLocaleString('en')}</td>
                  <td class="num">{formatDifference(d.difference ?? 0)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <details class="chart-table" open={days.length > 0}>
        <summary>Why the numbers differ</summary>
        <ul class="causes">
          <li>
            <strong>Which front answered.</strong> Only one of us answers the short domain at a time: while{' '}
            {vendor} does, readers go to {vendor} and never reach us, and the other way round. On a day marked
            “switched” (a failover or failback), each side counted only its part.
          </li>
          <li>
            <strong>Bots and link previews.</strong> We count Slack, X, WhatsApp and other preview fetchers
            and known bots separately and leave them out of “ours”; {vendor} applies its own filtering, which
            is not the same list.
          </li>
          <li>
            <strong>HEAD requests.</strong> Link checkers often ask with HEAD; we never count those as clicks.
          </li>
          <li>
            <strong>Browser-cached 301s.</strong> A browser that followed a permanent (301) redirect may go
            straight to the article next time without asking either of us, so neither counts it.
          </li>
          <li>
            <strong>Links through {vendor}’s own domain.</strong> If a copy of the link was shared under{' '}
            {vendor}’s domain (bit.ly/…), those clicks only ever reach {vendor}.
          </li>
          <li>
            <strong>Time zones and late data.</strong> Both columns here are UTC days; {vendor}’s own
            dashboard may show days in your account’s time zone, and its count for today keeps growing until
            the next pull.
          </li>
        </ul>
      </details>
    </section>
  );
}
