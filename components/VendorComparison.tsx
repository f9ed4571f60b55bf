import type { VendorComparison as Comparison } from '../lib/clicks/link_stats.ts';
import type { I18n } from '../lib/i18n/translator.ts';
import { useI18n } from './I18n.tsx';
import { vendorName } from './link_fields.ts';

type Front = Comparison['byDay'][number]['front'];

/** Who answered the short domain, for people. */
function frontName(i18n: Pick<I18n, 't'>, front: string): string {
  if (front === 'bitly') return i18n.t('vendor.bitly');
  if (front === 'switched') return i18n.t('comparison.front.switched');
  return i18n.t('comparison.front.inhouse');
}

/** A signed difference: "+3", "−3" (a real minus sign), "0", digits as the page writes them. */
export function formatDifference(n: number, number: (n: number) => string = (v) => v.toLocaleString('en')) {
  return n > 0 ? `+${number(n)}` : n < 0 ? `−${number(-n)}` : number(0);
}

/** A signed number laid out left to right, so a right-to-left page keeps its sign in front. */
function Difference(props: { n: number }) {
  const i18n = useI18n();
  return <bdi dir="ltr">{formatDifference(props.n, i18n.number)}</bdi>;
}

/**
 * Our count of people beside the vendor's own count, for the same UTC days, with the difference and the reasons
 * two honest counters disagree. A view no shortener offers: a shortener shows only its own number.
 */
export function VendorComparison(props: { comparison: Comparison }) {
  const i18n = useI18n();
  const { t } = i18n;
  const c = props.comparison;
  const vendor = vendorName(i18n, c.name);
  const days = c.byDay.filter((d) => d.vendorClicks !== null).reverse();
  const cause = (title: string, text: string) => (
    <li>
      <strong>{title}</strong> {text}
    </li>
  );
  return (
    <section class="card" aria-labelledby="vendor-title">
      <div class="card-header">
        <h2 id="vendor-title">{t('comparison.title', { vendor })}</h2>
      </div>
      <p class="muted small">
        {c.fetchedAt
          ? t('comparison.asOf', { vendor, time: i18n.dateTime(new Date(c.fetchedAt)) })
          : t('comparison.notPulled', { vendor })}{' '}
        {t('comparison.basis')}
      </p>
      {days.length > 0 && (
        <>
          <div class="stat-row">
            <div class="stat">
              <span class="stat-value">{i18n.number(c.ourClicks)}</span>
              <span class="stat-label">{t('comparison.oursPeople')}</span>
            </div>
            <div class="stat">
              <span class="stat-value">{i18n.number(c.clicks)}</span>
              <span class="stat-label">{vendor}</span>
            </div>
            <div class="stat">
              <span class="stat-value">
                <Difference n={c.difference} />
              </span>
              <span class="stat-label">{t('comparison.differenceLabel', { vendor })}</span>
            </div>
            <div class="stat">
              <span class="stat-value">{i18n.number(c.comparedDays)}</span>
              <span class="stat-label">{t('comparison.daysCompared')}</span>
            </div>
          </div>
          <p class="small">
            {i18n.rich(c.activeFront.since ? 'comparison.frontNowSince' : 'comparison.frontNow', {
              front: <strong>{frontName(i18n, c.activeFront.active)}</strong>,
              since: c.activeFront.since ? i18n.dateTime(new Date(c.activeFront.since)) : '',
            })}{' '}
            {t('comparison.frontNote')}
          </p>
          <table class="compact-table comparison-table">
            <caption class="visually-hidden">{t('comparison.caption', { vendor })}</caption>
            <thead>
              <tr>
                <th scope="col">{t('comparison.col.day')}</th>
                <th scope="col">{t('comparison.col.front')}</th>
                <th scope="col">{t('comparison.col.ours')}</th>
                <th scope="col">{vendor}</th>
                <th scope="col">{t('comparison.col.difference')}</th>
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr key={d.day}>
                  <th scope="row">{i18n.day(d.day)}</th>
                  <td>{frontName(i18n, d.front satisfies Front)}</td>
                  <td class="num">{i18n.number(d.ourClicks)}</td>
                  <td class="num">{i18n.number(d.vendorClicks ?? 0)}</td>
                  <td class="num">
                    <Difference n={d.difference ?? 0} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <details class="chart-table" open={days.length > 0}>
        <summary>{t('comparison.why')}</summary>
        <ul class="causes">
          {cause(
            t('comparison.cause.front.title'),
            t('comparison.cause.front.text', { vendor, switched: t('comparison.front.switched') }),
          )}
          {cause(t('comparison.cause.bots.title'), t('comparison.cause.bots.text', { vendor }))}
          {cause(t('comparison.cause.head.title'), t('comparison.cause.head.text'))}
          {cause(t('comparison.cause.cached.title'), t('comparison.cause.cached.text'))}
          {cause(
            t('comparison.cause.domain.title', { vendor }),
            t('comparison.cause.domain.text', { vendor, domain: 'bit.ly/…' }),
          )}
          {cause(t('comparison.cause.zones.title'), t('comparison.cause.zones.text', { vendor }))}
        </ul>
      </details>
    </section>
  );
}
