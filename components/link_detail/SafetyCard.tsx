// A link's safety verdict, its reason and when it was last checked.
import type { Link } from '../../lib/links/link.ts';
import { SafetyBadge } from '../Badge.tsx';
import { useI18n } from '../I18n.tsx';

/** The safety card of a link. */
export function SafetyCard(props: { safety: Link['safety']; reason: string | null; checkedAt: Date | null }) {
  const i18n = useI18n();
  const { t } = i18n;
  return (
    <section class="card" aria-labelledby="safety-title">
      <h2 id="safety-title">{t('detail.safety')}</h2>
      <p>
        <SafetyBadge safety={props.safety} />
      </p>
      {props.reason && (
        <p class="url-break" dir="auto">
          {props.reason}
        </p>
      )}
      <p class="muted small">
        {props.checkedAt
          ? t('detail.lastChecked', { time: i18n.dateTime(props.checkedAt) })
          : t('detail.notScanned')}
      </p>
    </section>
  );
}
