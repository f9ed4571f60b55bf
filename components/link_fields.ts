import type { I18n } from '../lib/i18n/translator.ts';

/** The link form's field labels in the editor's language (for fields and the sentences of their errors). */
export function getLinkFieldLabels(i18n: Pick<I18n, 't'>): Record<string, string> {
  const { t } = i18n;
  return {
    url: t('field.url'),
    alias: t('field.alias'),
    domain: t('field.domain'),
    title: t('field.title'),
    tags: t('field.tags'),
    expiresAt: t('field.expiresAt'),
    expiredUrl: t('field.expiredUrl'),
    redirectStatus: t('field.redirectStatus'),
    status: t('field.status'),
    reason: t('field.reason'),
    form: t('field.form'),
    utm: t('field.utm'),
    rules: t('rules.title'),
    // The parameter's name is an argument: it stays as written, isolated in a right-to-left sentence.
    utmCampaign: t('field.utmCampaign', { param: 'utm_campaign' }),
    utmSource: t('field.utmSource', { param: 'utm_source' }),
    utmMedium: t('field.utmMedium', { param: 'utm_medium' }),
  };
}

/** The redirect type choices. */
export function getRedirectOptions(i18n: Pick<I18n, 't'>): { value: string; label: string }[] {
  const { t } = i18n;
  return [
    { value: '', label: t('redirect.default') },
    { value: '301', label: t('redirect.301') },
    { value: '302', label: t('redirect.302') },
    { value: '307', label: t('redirect.307') },
    { value: '308', label: t('redirect.308') },
  ];
}

/** A vendor's name for people ("bitly" → "Bitly"). */
export function vendorName(i18n: Pick<I18n, 't'>, name: string): string {
  return name === 'bitly' || name === 'inhouse' ? i18n.t(`vendor.${name}`) : name;
}

/** A short URL as people read it: without `https://`. */
export const withoutScheme = (url: string) => url.replace(/^https?:\/\//, '');
