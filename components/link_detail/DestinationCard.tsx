// Where a link sends readers, and the facts around it: expiry, redirect, UTM, who made it, its article, dates.
import type { Link } from '../../lib/links/link.ts';
import { describeActor } from '../AuditHistory.tsx';
import { DisplayUrl } from '../DisplayUrl.tsx';
import { useI18n } from '../I18n.tsx';
import { UtmParams } from '../UtmFields.tsx';
import { Fact } from './Fact.tsx';

/** The destination card; `creator` is whoever made the link (an actor name). */
export function DestinationCard(props: { link: Link; creator: string }) {
  const i18n = useI18n();
  const { t } = i18n;
  const { link, creator } = props;
  return (
    <section class="card" aria-labelledby="destination-title">
      <h2 id="destination-title">{t('detail.destination')}</h2>
      <p class="destination">
        <a href={link.url} target="_blank" rel="noopener noreferrer" class="url-break">
          <DisplayUrl url={link.url} />
        </a>
      </p>
      <details class="exact-url">
        <summary>{t('detail.exactUrl')}</summary>
        <code class="url-break" dir="ltr">
          {link.url}
        </code>
      </details>
      <dl class="facts">
        <Fact label={t('detail.expires')}>
          {link.expiresAt ? i18n.dateTime(new Date(link.expiresAt)) : t('common.never')}
        </Fact>
        <Fact label={t('detail.afterExpiry')}>
          {link.expiredUrl ? <DisplayUrl url={link.expiredUrl} class="url-break" /> : t('detail.expiredPage')}
        </Fact>
        <Fact label={t('detail.redirect')}>
          {link.redirectStatus ? String(link.redirectStatus) : t('detail.deploymentDefault')}
        </Fact>
        {link.utm && (
          <Fact label={t('detail.utm')}>
            <UtmParams utm={link.utm} />
          </Fact>
        )}
        <Fact label={t('detail.madeBy')}>
          {i18n.rich('detail.madeByValue', {
            actor: <bdi dir="auto">{describeActor(i18n, creator)}</bdi>,
            origin: t(`detail.origin.${link.origin}`),
          })}
        </Fact>
        {link.site && (
          <Fact label={t('detail.article')}>
            <bdi dir="ltr">
              {link.site} #{link.postId}
            </bdi>
          </Fact>
        )}
        <Fact label={t('detail.created')}>{i18n.dateTime(new Date(link.createdAt))}</Fact>
        <Fact label={t('detail.lastChange')}>{i18n.dateTime(new Date(link.updatedAt))}</Fact>
      </dl>
    </section>
  );
}
