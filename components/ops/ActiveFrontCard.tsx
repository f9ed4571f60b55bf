// Which front answers each short domain now, and since when.
import { useI18n } from '../I18n.tsx';
import { vendorName } from '../link_fields.ts';
import type { OpsView } from './ops_view.ts';

/**
 * The active front (Bitly or in-house) and when it became so; with several short domains, each domain's
 * (fronts are per domain, ADR 0073).
 */
export function ActiveFrontCard(props: { front: OpsView['front']; fronts?: OpsView['fronts'] }) {
  const i18n = useI18n();
  const { t } = i18n;
  const { front, fronts } = props;
  const since = (f: { since: string | null }) =>
    f.since ? t('ops.since', { time: i18n.dateTime(new Date(f.since)) }) : t('ops.sinceInstall');
  return (
    <section class="card status-card" aria-label={t('ops.activeFront')}>
      <h2 class="eyebrow">{t('ops.activeFront')}</h2>
      {fronts && fronts.length > 1 ? (
        <ul class="plain-list">
          {fronts.map((f) => (
            <li key={f.domain} data-domain={f.domain}>
              <bdi class="mono small" dir="ltr">
                {f.domain}
              </bdi>
              {': '}
              <strong>{vendorName(i18n, f.active)}</strong>
              <span class="muted small"> · {since(f)}</span>
            </li>
          ))}
        </ul>
      ) : (
        <>
          <p class="status-main big">{vendorName(i18n, front.active)}</p>
          <p class="muted small">{since(front)}</p>
        </>
      )}
      <p class="small">{t('ops.frontNote')}</p>
    </section>
  );
}
