/** `/ui/links.csv` with the list's filters (no cursor: the export holds every matching link). */
export function linksCsvHref(filters: Record<string, string>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v && !(k === 'sort' && v === 'newest')) params.set(k, v);
  const qs = params.toString();
  return `/ui/links.csv${qs ? `?${qs}` : ''}`;
}

/** The links list's download: every link matching the current filters, as a spreadsheet-ready CSV. */
export function LinksCsvButton(props: { filters: Record<string, string> }) {
  return (
    <a
      class="btn btn-secondary"
      href={linksCsvHref(props.filters)}
      download
      title="Every link matching these filters, as CSV (opens in Excel, Numbers, LibreOffice, Google Sheets)"
    >
      Download CSV
    </a>
  );
}

/** The link page's downloads: its clicks over the period shown, by day, by country and by referrer. */
export function ClicksCsvLinks(props: { code: string; days: number }) {
  const href = (by: string) =>
    `/ui/links/${encodeURIComponent(props.code)}/clicks.csv?days=${props.days}&by=${by}`;
  return (
    <p class="small export-links">
      Download these {props.days} days as CSV:{' '}
      <a href={href('day')} download>
        by day
      </a>
      {' · '}
      <a href={href('country')} download>
        by country
      </a>
      {' · '}
      <a href={href('referrer')} download>
        by referrer
      </a>
    </p>
  );
}
