// Which front answers the short domain now, and since when.
import { useI18n } from '../I18n.tsx';
import { vendorName } from '../link_fields.ts';
import type { OpsView } from './ops_view.ts';

/** The active front (Bitly or in-house) and when it became so. */
export function ActiveFrontCard(props: { front: OpsView['front'] }) {
  const i18n = useI18n();
  const { t } = i18n;
  const { front } = props;
  return (
    <section class="card status-card" aria-label={t('ops.activeFront')}>
      <h2 class="eyebrow">{t('ops.activeFront')}</h2>
      <p class="status-main big">{vendorName(i18n, front.active)}</p>
      <p class="muted small">
        {front.since ? t('ops.since', { time: i18n.dateTime(new Date(front.since)) }) : t('ops.sinceInstall')}
      </p>
      <p class="small">{t('ops.frontNote')}</p>
    </section>
  );
}
