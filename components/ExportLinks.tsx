import { useI18n } from './I18n.tsx';

/** `/ui/links.csv` with the list's filters (no cursor: the export holds every matching link). */
export function linksCsvHref(filters: Record<string, string>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v && !(k === 'sort' && v === 'newest')) params.set(k, v);
  const qs = params.toString();
  return `/ui/links.csv${qs ? `?${qs}` : ''}`;
}

/** The links list's download: every link matching the current filters, as a spreadsheet-ready CSV. */
export function LinksCsvButton(props: { filters: Record<string, string> }) {
  const { t } = useI18n();
  return (
    <a class="btn btn-secondary" href={linksCsvHref(props.filters)} download title={t('export.linksTitle')}>
      {t('export.links')}
    </a>
  );
}

/** The link page's downloads: its clicks over the period shown, by day, country, referrer, browser and OS. */
export function ClicksCsvLinks(props: { code: string; days: number }) {
  const { t } = useI18n();
  const href = (by: string) =>
    `/ui/links/${encodeURIComponent(props.code)}/clicks.csv?days=${props.days}&by=${by}`;
  return (
    <p class="small export-links">
      {t('export.clicks', { days: props.days })}{' '}
      <a href={href('day')} download>
        {t('export.byDay')}
      </a>
      {' · '}
      <a href={href('country')} download>
        {t('export.byCountry')}
      </a>
      {' · '}
      <a href={href('referrer')} download>
        {t('export.byReferrer')}
      </a>
      {' · '}
      <a href={href('browser')} download>
        {t('export.byBrowser')}
      </a>
      {' · '}
      <a href={href('os')} download>
        {t('export.byOs')}
      </a>
    </p>
  );
}
