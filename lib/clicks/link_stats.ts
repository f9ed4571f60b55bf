import { z } from 'zod';
import { ValidationError } from '../shared/errors.ts';
import {
  type ClickKind,
  listDailyClicks,
  listTopCountries,
  listTopReferrers,
} from '../stores/click_stats_store.ts';
import type { Db } from '../stores/sql.ts';

const DAY_MS = 86_400_000;
/** Default window of stats: the last 30 days. */
export const STATS_DEFAULT_DAYS = 30;
/** Longest window one stats request may cover. */
export const STATS_MAX_DAYS = 366;
/** How many countries and referrers stats list. */
export const STATS_TOP_LIMIT = 10;
/** Kinds that are people following the link (the `clicks` figure); bots, HEAD and previews are not. */
const READER_KINDS: ClickKind[] = ['human', 'qr'];

const dayOrDateTime = z.union([
  z.iso.date().transform((d) => new Date(`${d}T00:00:00Z`)),
  z.iso.datetime({ offset: true }).transform((d) => new Date(d)),
]);

/** GET /api/v1/links/{code}/stats query: `from`/`to` as dates (UTC days) or date-times with a zone. */
export const linkStatsQuerySchema = z.strictObject({
  from: z.preprocess((v) => (v === '' ? undefined : v), dayOrDateTime.optional()),
  to: z.preprocess((v) => (v === '' ? undefined : v), dayOrDateTime.optional()),
});
export type LinkStatsQuery = z.infer<typeof linkStatsQuerySchema>;

const dayCountSchema = z.object({
  day: z.iso.date(),
  clicks: z.number().int(),
  humanClicks: z.number().int(),
  qrScans: z.number().int(),
  botHits: z.number().int(),
  previews: z.number().int(),
});

/** The stats of one link (API.md), with per-day breakdowns by kind for charts. */
export const linkStatsSchema = z.object({
  code: z.string(),
  from: z.string(),
  to: z.string(),
  clicks: z.number().int().describe('people following the link: humanClicks + qrScans'),
  humanClicks: z.number().int(),
  botHits: z.number().int().describe('crawlers and HEAD requests'),
  previews: z.number().int().describe('link-preview fetchers (Slack, X, WhatsApp, ...)'),
  qrScans: z.number().int(),
  byDay: z.array(dayCountSchema),
  byCountry: z.array(z.object({ country: z.string().nullable(), clicks: z.number().int() })),
  byReferrer: z.array(z.object({ host: z.string().nullable(), clicks: z.number().int() })),
  vendor: z.object({ name: z.string(), clicks: z.number().int() }).optional(),
});
export type LinkStats = z.infer<typeof linkStatsSchema>;

/** Clicks a vendor (e.g. Bitly) counted for a link over a window; null when it offers none. */
export type VendorClickSource = (
  code: string,
  range: { from: Date; to: Date },
) => Promise<{ name: string; clicks: number } | null>;

/** The window [from, to) a query asks for: default the last 30 days, at most 366 days. */
export function resolveStatsRange(query: LinkStatsQuery, now = new Date()): { from: Date; to: Date } {
  const to = query.to ?? now;
  const from = query.from ?? new Date(to.getTime() - STATS_DEFAULT_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime()) {
    throw new ValidationError([{ path: 'from', message: 'must be before to' }]);
  }
  if (to.getTime() - from.getTime() > STATS_MAX_DAYS * DAY_MS) {
    throw new ValidationError([
      { path: 'from', message: `the window may span at most ${STATS_MAX_DAYS} days` },
    ]);
  }
  return { from, to };
}

/** Aggregates click_counts for `code` over the window; the vendor's own count when a source is given. */
export async function getLinkStats(
  db: Db,
  code: string,
  range: { from: Date; to: Date },
  vendorClicks?: VendorClickSource,
): Promise<LinkStats> {
  const { from, to } = range;
  const [daily, countries, referrers, vendor] = await Promise.all([
    listDailyClicks(db, code, from, to),
    listTopCountries(db, code, READER_KINDS, from, to, STATS_TOP_LIMIT),
    listTopReferrers(db, code, READER_KINDS, from, to, STATS_TOP_LIMIT),
    // A vendor outage must not take our own stats down with it.
    vendorClicks ? vendorClicks(code, range).catch(() => null) : Promise.resolve(null),
  ]);
  const days = new Map<string, z.infer<typeof dayCountSchema>>();
  const lastDay = new Date(to.getTime() - 1).toISOString().slice(0, 10);
  for (let t = Date.parse(from.toISOString().slice(0, 10)); ; t += DAY_MS) {
    const day = new Date(t).toISOString().slice(0, 10);
    days.set(day, { day, clicks: 0, humanClicks: 0, qrScans: 0, botHits: 0, previews: 0 });
    if (day >= lastDay) break;
  }
  const totals = { humanClicks: 0, qrScans: 0, botHits: 0, previews: 0 };
  for (const row of daily) {
    const entry = days.get(row.day);
    const field =
      row.kind === 'human'
        ? 'humanClicks'
        : row.kind === 'qr'
          ? 'qrScans'
          : row.kind === 'preview'
            ? 'previews'
            : 'botHits';
    totals[field] += row.clicks;
    if (entry) {
      entry[field] += row.clicks;
      if (field === 'humanClicks' || field === 'qrScans') entry.clicks += row.clicks;
    }
  }
  return {
    code,
    from: from.toISOString(),
    to: to.toISOString(),
    clicks: totals.humanClicks + totals.qrScans,
    ...totals,
    byDay: [...days.values()],
    byCountry: countries.map((c) => ({ country: c.key || null, clicks: c.clicks })),
    byReferrer: referrers.map((r) => ({ host: r.key || null, clicks: r.clicks })),
    ...(vendor ? { vendor } : {}),
  };
}
