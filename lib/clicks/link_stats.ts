import { z } from 'zod';
import { ValidationError } from '../shared/errors.ts';
import {
  type ClickKind,
  listDailyClicks,
  listTopCountries,
  listTopReferrers,
} from '../stores/click_stats_store.ts';
import type { Db } from '../stores/sql.ts';
import { browserFamilySchema, familyTotals, osFamilySchema } from './family_totals.ts';

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

/** Ours beside the vendor's, for the same UTC days. */
export const vendorComparisonSchema = z.object({
  name: z.string().describe('the vendor: bitly'),
  clicks: z
    .number()
    .int()
    .describe('the vendor’s clicks on the compared days (the days within the window it reported on)'),
  fetchedAt: z.string().nullable().describe('when the vendor’s numbers were last pulled; null: not yet'),
  comparedDays: z.number().int().describe('days within the window with the vendor’s numbers'),
  ourClicks: z.number().int().describe('our people’s clicks (humanClicks + qrScans) on those same days'),
  difference: z.number().int().describe('ourClicks − clicks'),
  activeFront: z.object({ active: z.string(), since: z.string().nullable() }),
  byDay: z.array(
    z.object({
      day: z.iso.date(),
      ourClicks: z.number().int(),
      vendorClicks: z.number().int().nullable().describe('null: not pulled for this day'),
      difference: z.number().int().nullable(),
      front: z
        .enum(['inhouse', 'bitly', 'switched'])
        .describe('who answered the short domain that day (switched: both, a failover or failback day)'),
    }),
  ),
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
  byBrowser: z
    .array(z.object({ family: browserFamilySchema, clicks: z.number().int() }))
    .describe(
      'people’s clicks by browser family, most first, over the whole UTC days the window touches (counted per day)',
    ),
  byOs: z
    .array(z.object({ family: osFamilySchema, clicks: z.number().int() }))
    .describe('people’s clicks by operating system family, most first, over the same days as byBrowser'),
  vendor: vendorComparisonSchema
    .optional()
    .describe('the vendor’s own counts for the same days (present when the vendor holds the link)'),
});
export type LinkStats = z.infer<typeof linkStatsSchema>;
export type VendorComparison = z.infer<typeof vendorComparisonSchema>;

/** A vendor's own per-day counts for a link over a window (read from our store); null when it has none. */
export interface VendorDailyClicks {
  name: string;
  /** When the vendor's numbers were last pulled; null: never yet. */
  fetchedAt: Date | null;
  /** The days the vendor reported within the window (UTC days), oldest first; a day absent was not pulled. */
  days: { day: string; clicks: number }[];
  /** The active front: who answered the short domain, and the switches up to the window's end. */
  fronts: { active: string; since: string | null; switches: { at: Date; front: string }[] };
}

/** Where a vendor's per-day counts for a link come from (lib/analytics/vendor_clicks.ts reads the stored pull). */
export type VendorClickSource = (
  code: string,
  range: { from: Date; to: Date },
) => Promise<VendorDailyClicks | null>;

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
  const [daily, countries, referrers, families, vendorDays] = await Promise.all([
    listDailyClicks(db, code, from, to),
    listTopCountries(db, code, READER_KINDS, from, to, STATS_TOP_LIMIT),
    listTopReferrers(db, code, READER_KINDS, from, to, STATS_TOP_LIMIT),
    familyTotals(db, { from, to, key: code }),
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
    byBrowser: families.byBrowser,
    byOs: families.byOs,
    ...(vendorDays ? { vendor: compareWithVendor([...days.values()], vendorDays) } : {}),
  };
}

/** The front that answered each day: the last switch before the day, or `switched` when one fell within it. */
function frontsByDay(
  days: string[],
  fronts: VendorDailyClicks['fronts'],
): Map<string, 'inhouse' | 'bitly' | 'switched'> {
  const out = new Map<string, 'inhouse' | 'bitly' | 'switched'>();
  const switches = [...fronts.switches].sort((a, b) => a.at.getTime() - b.at.getTime());
  const asFront = (f: string) => (f === 'bitly' ? 'bitly' : 'inhouse') as 'inhouse' | 'bitly';
  let i = 0;
  // Lifeline starts in-house until a failback says otherwise (lib/failover/active_front.ts).
  let current: 'inhouse' | 'bitly' = 'inhouse';
  for (const day of days) {
    const start = Date.parse(`${day}T00:00:00Z`);
    const end = start + DAY_MS;
    while (i < switches.length && switches[i]!.at.getTime() < start) current = asFront(switches[i++]!.front);
    let switched = false;
    while (i < switches.length && switches[i]!.at.getTime() < end) {
      switched = true;
      current = asFront(switches[i++]!.front);
    }
    out.set(day, switched ? 'switched' : current);
  }
  return out;
}

/** Our people's clicks beside the vendor's, day by day, over the days the vendor reported on. */
export function compareWithVendor(
  ours: { day: string; clicks: number }[],
  vendor: VendorDailyClicks,
): VendorComparison {
  const theirs = new Map(vendor.days.map((d) => [d.day, d.clicks]));
  const fronts = frontsByDay(
    ours.map((d) => d.day),
    vendor.fronts,
  );
  let clicks = 0;
  let ourClicks = 0;
  let comparedDays = 0;
  const byDay = ours.map((d) => {
    const vendorClicks = theirs.get(d.day) ?? null;
    if (vendorClicks !== null) {
      clicks += vendorClicks;
      ourClicks += d.clicks;
      comparedDays++;
    }
    return {
      day: d.day,
      ourClicks: d.clicks,
      vendorClicks,
      difference: vendorClicks === null ? null : d.clicks - vendorClicks,
      front: fronts.get(d.day)!,
    };
  });
  return {
    name: vendor.name,
    clicks,
    fetchedAt: vendor.fetchedAt?.toISOString() ?? null,
    comparedDays,
    ourClicks,
    difference: ourClicks - clicks,
    activeFront: { active: vendor.fronts.active, since: vendor.fronts.since },
    byDay,
  };
}
