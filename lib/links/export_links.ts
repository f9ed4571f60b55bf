import type { z } from 'zod';
import type { I18n } from '../i18n/translator.ts';
import { type CsvCell, toCsvDateTime, toCsvStream } from '../shared/csv.ts';
import { keyCode, shortUrlOfKey } from '../shared/link_key.ts';
import { type LinkListPosition, listLinks } from '../stores/link_list_store.ts';
import type { LinkRow, VendorLinkRow } from '../stores/link_rows.ts';
import { groupVendorLinks, listVendorLinks } from '../stores/link_store.ts';
import type { Db } from '../stores/sql.ts';
import { toDisplayUrl } from './display_url.ts';
import { linkListQuerySchema, toLinkListFilter } from './list_links.ts';

/** Links read per query while streaming an export (keyset pages, as the list pages itself). */
export const LINKS_CSV_PAGE_ROWS = 500;

/** GET /api/v1/links.csv and /ui/links.csv query: the list's filters and sort; the whole result, no paging. */
export const linkExportQuerySchema = linkListQuerySchema.omit({ cursor: true, limit: true });
export type LinkExportQuery = z.infer<typeof linkExportQuerySchema>;

/**
 * The words of a CSV download for an editor: column names and the words in cells (statuses, verdicts, where a
 * link was made, the Bitly copy's state) in the editor's language, and a readable destination (toDisplayUrl:
 * an Arabic slug as letters, not %D9%85…) beside the exact one. Without one, a download is the API's:
 * English column names, the API's codes (`active`, `api`, `synced`) and no readable column, a stable contract.
 */
export type CsvLanguage = Pick<I18n, 't' | 'region'>;

/** The columns of the links export, in order (the API's English, or the editor's language). */
export function getLinksCsvHeader(timeZone?: string, language?: CsvLanguage): string[] {
  const zone = timeZone ?? 'UTC';
  if (language) {
    const { t } = language;
    return [
      t('csv.links.code'),
      t('csv.links.shortUrl'),
      t('csv.links.url'),
      t('csv.links.urlShown'),
      t('csv.links.title'),
      t('csv.links.status'),
      t('csv.links.safety'),
      t('csv.links.origin'),
      t('csv.links.site'),
      t('csv.links.postId'),
      t('csv.links.tags'),
      t('csv.links.utmCampaign'),
      t('csv.links.utmSource'),
      t('csv.links.utmMedium'),
      t('csv.links.expires', { zone }),
      t('csv.links.created', { zone }),
      t('csv.links.updated', { zone }),
      t('csv.links.bitly'),
    ];
  }
  return [
    'Code',
    'Short URL',
    'Destination URL',
    'Title',
    'Status',
    'Safety',
    'Made in',
    'Site',
    'Post ID',
    'Tags',
    'UTM campaign',
    'UTM source',
    'UTM medium',
    `Expires (${zone})`,
    `Created (${zone})`,
    `Last changed (${zone})`,
    'Bitly copy',
  ];
}

/** Where short URLs start (each link's own short domain, ADR 0078), and the editor's zone and language. */
interface LinksCsvOptions {
  shortBaseUrl: string;
  /** SHORT_DOMAINS, the default first; absent: every link is on the default domain. */
  shortDomains?: readonly string[] | undefined;
  timeZone?: string | undefined;
  language?: CsvLanguage | undefined;
}

function toLinkCells(
  row: LinkRow,
  vendors: VendorLinkRow[] | undefined,
  options: LinksCsvOptions,
): CsvCell[] {
  const t = options.language?.t;
  const bitly = vendors?.find((v) => v.vendor === 'bitly')?.state ?? null;
  return [
    keyCode(row.code),
    shortUrlOfKey(options, row.code),
    row.targetUrl,
    ...(t ? [toDisplayUrl(row.targetUrl)] : []),
    row.title,
    t ? t(`status.${row.status}`) : row.status,
    t ? t(`safety.${row.safety}`) : row.safety,
    t ? t(`origin.${row.origin}`) : row.origin,
    row.site,
    row.postId,
    row.tags.join(' '),
    row.utmCampaign,
    row.utmSource,
    row.utmMedium,
    toCsvDateTime(row.expiresAt, options.timeZone),
    toCsvDateTime(row.createdAt, options.timeZone),
    toCsvDateTime(row.updatedAt, options.timeZone),
    t && bitly ? t(`vendorState.${bitly}`) : bitly,
  ];
}

/**
 * Every link matching the list's filters, in its sort order, as a CSV stream (lib/shared/csv.ts: UTF-8 with a
 * BOM, RFC 4180, formula-safe). Read in keyset pages of LINKS_CSV_PAGE_ROWS as the client downloads, so memory
 * stays flat however many links match; a link created during the download appears at most once. Dates are in
 * `timeZone` (the editor's) or, without one, ISO 8601 UTC; words in `language` (the editor's) or the API's.
 */
export function exportLinksCsv(
  db: Db,
  query: LinkExportQuery,
  options: LinksCsvOptions,
): ReadableStream<Uint8Array> {
  const filter = toLinkListFilter(query, {
    shortBaseUrl: options.shortBaseUrl,
    shortDomains: options.shortDomains ?? [],
  });
  async function* pages() {
    let position: LinkListPosition | undefined;
    for (;;) {
      const rows = await listLinks(db, filter, query.sort, LINKS_CSV_PAGE_ROWS, position);
      if (rows.length === 0) return;
      const vendors = groupVendorLinks(
        await listVendorLinks(
          db,
          rows.map((r) => r.code),
        ),
      );
      yield rows.map((row) => toLinkCells(row, vendors.get(row.code), options));
      if (rows.length < LINKS_CSV_PAGE_ROWS) return;
      const last = rows[rows.length - 1]!;
      position = { value: last.sortValue, code: last.code, direction: 'after' };
    }
  }
  return toCsvStream(getLinksCsvHeader(options.timeZone, options.language), pages());
}

/** The download's file name: `lifeline-links-YYYY-MM-DD.csv`. */
export function getLinksCsvFileName(now = new Date()): string {
  return `lifeline-links-${now.toISOString().slice(0, 10)}.csv`;
}
