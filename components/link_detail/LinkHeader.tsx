// The top of a link's page: its short URL and title, status, safety and tags, and copy, open and preview.
import CopyButton from '../../islands/CopyButton.tsx';
import type { Link } from '../../lib/links/link.ts';
import { SafetyBadge, StatusBadge } from '../Badge.tsx';
import { DirIcon, useI18n } from '../I18n.tsx';
import { Island } from '../Island.tsx';
import { withoutScheme } from '../link_fields.ts';

/** The link's heading and its actions. */
export function LinkHeader(props: { link: Link }) {
  const { t } = useI18n();
  const { link } = props;
  const copyLabels = { copiedLabel: t('copy.copied') };
  return (
    <div class="page-header">
      <div class="min-w-0">
        <p class="breadcrumb">
          <a href="/ui/links">{t('nav.links')}</a> /
        </p>
        <h1 class="short-url-heading">
          <span class="visually-hidden">{t('detail.shortLink')} </span>
          <bdi dir="ltr">{withoutScheme(link.shortUrl)}</bdi>
        </h1>
        {link.title && (
          <p class="link-heading-title">
            <bdi dir="auto">{link.title}</bdi>
          </p>
        )}
        <div class="header-badges">
          <StatusBadge status={link.status} />
          <SafetyBadge safety={link.safety} />
          {link.tags.map((tag) => (
            <a key={tag} class="tag" dir="auto" href={`/ui/links?tag=${encodeURIComponent(tag)}`}>
              {tag}
            </a>
          ))}
        </div>
      </div>
      <div class="header-actions">
        <Island
          name="CopyButton"
          component={CopyButton}
          props={{ text: link.shortUrl, label: t('copy.link'), ...copyLabels }}
        />
        <a class="btn btn-secondary btn-sm" href={link.shortUrl} target="_blank" rel="noopener noreferrer">
          {t('detail.open')} <DirIcon glyph="↗" />
        </a>
        <a
          class="btn btn-secondary btn-sm"
          href={`${link.shortUrl}+`}
          target="_blank"
          rel="noopener noreferrer"
        >
          {t('detail.preview')}
        </a>
      </div>
    </div>
  );
}
