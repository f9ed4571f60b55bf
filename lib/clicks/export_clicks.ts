import { z } from 'zod';
import { toCsv } from '../shared/csv.ts';
import { type ClickKind, listTopCountries, listTopReferrers } from '../stores/click_stats_store.ts';
import type { Db } from '../stores/sql.ts';
import { getLinkStats, linkStatsQuerySchema, type VendorClickSource } from './link_stats.ts';

/** How a clicks export is broken down: one row per day, per country or per referrer host. */
export const CLICKS_CSV_DIMENSIONS = ['day', 'country', 'referrer'] as const;
export type ClicksCsvDimension = (typeof CLICKS_CSV_DIMENSIONS)[number];

/** GET /api/v1/links/{code}/clicks.csv query: the stats window (`from`, `to`) and `by` (default day). */
export const clicksExportQuerySchema = linkStatsQuerySchema.extend({
  by: z.preprocess((v) => (v === '' ? undefined : v), z.enum(CLICKS_CSV_DIMENSIONS).default('day')),
});

/** Every value, not a top ten: an export is the whole picture (countries are few; referrers are bounded). */
const ALL_ROWS = 100_000;
const READER_KINDS: ClickKind[] = ['human', 'qr'];
const regions = new Intl.DisplayNames(['en'], { type: 'region' });
const FRONT_TEXT = { inhouse: 'Lifeline', bitly: 'Bitly', switched: 'Both (switched that day)' } as const;

function countryName(code: string): string {
  if (!code) return 'Unknown';
  try {
    return regions.of(code) ?? code;
  } catch {
    return code;
  }
}

/**
 * A link's clicks over [from, to) as CSV (UTF-8 with a BOM, RFC 4180, formula-safe): by day with every kind
 * (and, when a vendor reports on the link, its own count, the difference and who answered the short domain),
 * or people's clicks by country or by referrer host, most first.
 */
export async function exportClicksCsv(
  db: Db,
  code: string,
  range: { from: Date; to: Date },
  by: ClicksCsvDimension,
  vendorClicks?: VendorClickSource,
): Promise<string> {
  if (by === 'country') {
    const rows = await listTopCountries(db, code, READER_KINDS, range.from, range.to, ALL_ROWS);
    return toCsv(
      ['Country code', 'Country', 'People'],
      rows.map((r) => [r.key || null, countryName(r.key), r.clicks]),
    );
  }
  if (by === 'referrer') {
    const rows = await listTopReferrers(db, code, READER_KINDS, range.from, range.to, ALL_ROWS);
    return toCsv(
      ['Referrer host', 'People'],
      rows.map((r) => [r.key || '(direct or hidden)', r.clicks]),
    );
  }
  const stats = await getLinkStats(db, code, range, vendorClicks);
  const vendor = stats.vendor;
  const name = vendor?.name === 'bitly' ? 'Bitly' : vendor?.name;
  const vendorDays = new Map(vendor?.byDay.map((d) => [d.day, d]) ?? []);
  const header = [
    'Day (UTC)',
    'People',
    'of which QR scans',
    'Link previews',
    'Bots and HEAD requests',
    ...(vendor ? [name!, `Difference (ours − ${name})`, 'Answered by'] : []),
  ];
  return toCsv(
    header,
    stats.byDay.map((d) => {
      const v = vendorDays.get(d.day);
      return [
        d.day,
        d.clicks,
        d.qrScans,
        d.previews,
        d.botHits,
        ...(vendor ? [v?.vendorClicks ?? null, v?.difference ?? null, v ? FRONT_TEXT[v.front] : null] : []),
      ];
    }),
  );
}

/** The download's file name: `lifeline-<code>-clicks-by-<dimension>-<first day>-<last day>.csv`. */
export function getClicksCsvFileName(code: string, by: ClicksCsvDimension, range: { from: Date; to: Date }) {
  const last = new Date(Math.max(range.from.getTime(), range.to.getTime() - 1));
  return `lifeline-${code}-clicks-by-${by}-${range.from.toISOString().slice(0, 10)}-${last.toISOString().slice(0, 10)}.csv`;
}
