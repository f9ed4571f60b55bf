import { z } from 'zod';
import type { I18n } from '../i18n/translator.ts';
import { toCsv } from '../shared/csv.ts';
import { type ClickKind, listTopCountries, listTopReferrers } from '../stores/click_stats_store.ts';
import type { Db } from '../stores/sql.ts';
import { familyTotals } from './family_totals.ts';
import { getLinkStats, linkStatsQuerySchema, type VendorClickSource } from './link_stats.ts';

/** How a clicks export is broken down: one row per day, per country, per referrer host, per browser or OS family. */
export const CLICKS_CSV_DIMENSIONS = ['day', 'country', 'referrer', 'browser', 'os'] as const;
export type ClicksCsvDimension = (typeof CLICKS_CSV_DIMENSIONS)[number];

/** GET /api/v1/links/{code}/clicks.csv query: the stats window (`from`, `to`) and `by` (default day). */
export const clicksExportQuerySchema = linkStatsQuerySchema.extend({
  by: z.preprocess((v) => (v === '' ? undefined : v), z.enum(CLICKS_CSV_DIMENSIONS).default('day')),
});

/** Every value, not a top ten: an export is the whole picture (countries are few; referrers are bounded). */
const ALL_ROWS = 100_000;
const READER_KINDS: ClickKind[] = ['human', 'qr'];
const regions = new Intl.DisplayNames(['en'], { type: 'region' });
/** The API's English names of the families (the same words as the English catalogue's family.* keys). */
const FAMILY_TEXT: Record<'browser' | 'os', Record<string, string>> = {
  browser: {
    chrome: 'Chrome',
    safari: 'Safari',
    firefox: 'Firefox',
    edge: 'Edge',
    samsung: 'Samsung Internet',
    opera: 'Opera',
    yandex: 'Yandex Browser',
    uc: 'UC Browser',
    facebook: 'Facebook (in-app)',
    instagram: 'Instagram (in-app)',
    telegram: 'Telegram (in-app)',
    snapchat: 'Snapchat (in-app)',
    tiktok: 'TikTok (in-app)',
    linkedin: 'LinkedIn (in-app)',
    webview: 'Other app (in-app view)',
    other: 'Other browser',
  },
  os: {
    ios: 'iOS',
    android: 'Android',
    windows: 'Windows',
    macos: 'macOS',
    linux: 'Linux',
    chromeos: 'ChromeOS',
    other: 'Other system',
  },
};
const FRONT_TEXT = { inhouse: 'Lifeline', bitly: 'Bitly', switched: 'Both (switched that day)' } as const;

/**
 * The API's words: English column names, English country names, who answered in English. An editor's download
 * passes its language instead (lib/links/export_links.ts, CsvLanguage).
 */
const API_WORDS = {
  day: 'Day (UTC)',
  people: 'People',
  qr: 'of which QR scans',
  previews: 'Link previews',
  bots: 'Bots and HEAD requests',
  difference: (vendor: string) => `Difference (ours − ${vendor})`,
  front: 'Answered by',
  countryCode: 'Country code',
  country: 'Country',
  referrer: 'Referrer host',
  direct: '(direct or hidden)',
  unknown: 'Unknown',
  browserFamily: 'Browser family',
  browser: 'Browser',
  osFamily: 'OS family',
  os: 'Operating system',
  familyName: (dimension: 'browser' | 'os', family: string): string =>
    FAMILY_TEXT[dimension][family] ?? family,
  vendor: (name: string) => (name === 'bitly' ? 'Bitly' : name),
  frontName: (front: keyof typeof FRONT_TEXT): string => FRONT_TEXT[front],
  region: (code: string) => {
    try {
      return regions.of(code) ?? code;
    } catch {
      return code;
    }
  },
};
type CsvWords = typeof API_WORDS;

/** The same words in an editor's language (the catalogues' csv.* keys). */
function toCsvWords(language: Pick<I18n, 't' | 'region'>): CsvWords {
  const { t } = language;
  return {
    day: t('csv.clicks.day'),
    people: t('csv.clicks.people'),
    qr: t('csv.clicks.qr'),
    previews: t('csv.clicks.previews'),
    bots: t('csv.clicks.bots'),
    difference: (vendor) => t('csv.clicks.difference', { vendor }),
    front: t('csv.clicks.front'),
    countryCode: t('csv.clicks.countryCode'),
    country: t('csv.clicks.country'),
    referrer: t('csv.clicks.referrer'),
    direct: t('csv.clicks.direct'),
    unknown: t('common.unknown'),
    browserFamily: t('csv.clicks.browserFamily'),
    browser: t('csv.clicks.browser'),
    osFamily: t('csv.clicks.osFamily'),
    os: t('csv.clicks.os'),
    familyName: (dimension, family) => t(`family.${dimension}.${family}` as Parameters<typeof t>[0]),
    vendor: (name) => (name === 'bitly' ? t('vendor.bitly') : name),
    frontName: (front) =>
      front === 'bitly'
        ? t('vendor.bitly')
        : front === 'switched'
          ? t('csv.clicks.frontSwitched')
          : t('comparison.front.inhouse'),
    region: language.region,
  };
}

/**
 * A link's clicks over [from, to) as CSV (UTF-8 with a BOM, RFC 4180, formula-safe): by day with every kind
 * (and, when a vendor reports on the link, its own count, the difference and who answered the short domain),
 * or people's clicks by country, by referrer host, by browser family or by OS family (the last two over the whole
 * UTC days the window touches: `Browser family`/`OS family` (the API's id), its name, `People`), most first. Column names and words are the API's English,
 * or in `language` (an editor's download).
 */
export async function exportClicksCsv(
  db: Db,
  code: string,
  range: { from: Date; to: Date },
  by: ClicksCsvDimension,
  vendorClicks?: VendorClickSource,
  language?: Pick<I18n, 't' | 'region'>,
): Promise<string> {
  const w = language ? toCsvWords(language) : API_WORDS;
  if (by === 'country') {
    const rows = await listTopCountries(db, code, READER_KINDS, range.from, range.to, ALL_ROWS);
    return toCsv(
      [w.countryCode, w.country, w.people],
      rows.map((r) => [r.key || null, r.key ? w.region(r.key) : w.unknown, r.clicks]),
    );
  }
  if (by === 'referrer') {
    const rows = await listTopReferrers(db, code, READER_KINDS, range.from, range.to, ALL_ROWS);
    return toCsv(
      [w.referrer, w.people],
      rows.map((r) => [r.key || w.direct, r.clicks]),
    );
  }
  if (by === 'browser' || by === 'os') {
    // Counted per UTC day: the days the window touches (family_totals.ts).
    const totals = await familyTotals(db, { from: range.from, to: range.to, key: code });
    const rows = by === 'browser' ? totals.byBrowser : totals.byOs;
    return toCsv(
      by === 'browser' ? [w.browserFamily, w.browser, w.people] : [w.osFamily, w.os, w.people],
      rows.map((r) => [r.family, w.familyName(by, r.family), r.clicks]),
    );
  }
  const stats = await getLinkStats(db, code, range, vendorClicks);
  const vendor = stats.vendor;
  const name = vendor ? w.vendor(vendor.name) : '';
  const vendorDays = new Map(vendor?.byDay.map((d) => [d.day, d]) ?? []);
  const header = [
    w.day,
    w.people,
    w.qr,
    w.previews,
    w.bots,
    ...(vendor ? [name, w.difference(name), w.front] : []),
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
        ...(vendor ? [v?.vendorClicks ?? null, v?.difference ?? null, v ? w.frontName(v.front) : null] : []),
      ];
    }),
  );
}

/** The download's file name: `lifeline-<code>-clicks-by-<dimension>-<first day>-<last day>.csv`. */
export function getClicksCsvFileName(code: string, by: ClicksCsvDimension, range: { from: Date; to: Date }) {
  const last = new Date(Math.max(range.from.getTime(), range.to.getTime() - 1));
  return `lifeline-${code}-clicks-by-${by}-${range.from.toISOString().slice(0, 10)}-${last.toISOString().slice(0, 10)}.csv`;
}
