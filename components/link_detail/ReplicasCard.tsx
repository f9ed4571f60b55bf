// Where a link is served: each vendor replica's state and last sync, and its workflows in Temporal.
import type { Link } from '../../lib/links/link.ts';
import { VendorStateBadge } from '../Badge.tsx';
import { DirIcon, useI18n } from '../I18n.tsx';
import { vendorName } from '../link_fields.ts';

/** The replicas card; `temporal.url` links the Temporal UI, else `temporal.query` is shown to search it. */
export function ReplicasCard(props: {
  vendors: Link['vendors'];
  temporal: { url: string | null; query: string };
}) {
  const i18n = useI18n();
  const { t } = i18n;
  return (
    <section class="card" aria-labelledby="replicas-title">
      <h2 id="replicas-title">{t('detail.served')}</h2>
      {props.vendors.length === 0 ? (
        <p class="muted small">{t('detail.noVendor')}</p>
      ) : (
        <ul class="replicas">
          {props.vendors.map((v) => (
            <li key={v.name}>
              <div class="replica-head">
                <strong>{vendorName(i18n, v.name)}</strong>
                <VendorStateBadge state={v.state} />
              </div>
              <span class="muted small">
                {v.syncedAt
                  ? t('detail.synced', { time: i18n.dateTime(new Date(v.syncedAt)) })
                  : t('detail.neverSynced')}
              </span>
              {v.error && (
                <p class="small error-text url-break" dir="auto">
                  {v.error}
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
      {props.temporal.url ? (
        <a class="btn btn-ghost btn-sm" href={props.temporal.url} target="_blank" rel="noopener noreferrer">
          {t('detail.temporal')} <DirIcon glyph="↗" />
        </a>
      ) : (
        <p class="muted small">
          {i18n.rich('detail.temporalSearch', {
            query: (
              <code class="url-break" dir="ltr">
                {props.temporal.query}
              </code>
            ),
          })}
        </p>
      )}
    </section>
  );
}
