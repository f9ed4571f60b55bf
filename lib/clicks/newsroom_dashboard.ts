// The newsroom dashboard (ADR 0079): readers' clicks today, over the last 7 and 30 days (UTC days, as stats and
// Bitly count them), Bitly's own counts for the same days where its pull stored them, and for a chosen window the
// most clicked links, the clicks by tag, WordPress site and short domain, and by browser and OS family
// (family_totals.ts, ADR 0081). Reads click_days and
// vendor_daily_clicks (migration 0124) through lib/stores/dashboard_store.ts; the window's breakdown is kept
// briefly per window, since it sums every clicked link of the window.
import {
  type DayTotal,
  type GroupRow,
  getWindowBreakdown,
  listClickDayTotals,
  listVendorDayTotals,
  type TopLinkRow,
} from '../stores/dashboard_store.ts';
import type { Db } from '../stores/sql.ts';
import { type FamilyTotals, familyTotals } from './family_totals.ts';

export type { GroupRow, TopLinkRow };

const DAY_MS = 86_400_000;

/** The windows the dashboard offers: today (UTC), the last 7 days and the last 30 days, today included. */
export const DASHBOARD_WINDOWS = ['today', '7d', '30d'] as const;
export type DashboardWindow = (typeof DASHBOARD_WINDOWS)[number];
export const DEFAULT_DASHBOARD_WINDOW: DashboardWindow = '7d';
const WINDOW_DAYS: Record<DashboardWindow, number> = { today: 1, '7d': 7, '30d': 30 };

/** Rows per list (top links, tags, sites, domains). */
export const DASHBOARD_LIST_LIMIT = 10;
/** How long a window's breakdown is reused (per process): a minute behind at most, as the click flush is. */
export const DASHBOARD_CACHE_MS = 60_000;

/** The window a query names, or the default for anything else (the page has no other input). */
export function parseDashboardWindow(value: string | undefined): DashboardWindow {
  return DASHBOARD_WINDOWS.find((w) => w === value) ?? DEFAULT_DASHBOARD_WINDOW;
}

/** One window's totals: ours, and Bitly's over the days it reported within it. */
export interface WindowTotals {
  window: DashboardWindow;
  /** First and last UTC day of the window (YYYY-MM-DD). */
  fromDay: string;
  toDay: string;
  /** Our readers' clicks (human and QR) on every day of the window. */
  clicks: number;
  /** Bitly's clicks on the days of the window it reported on; null when it reported on none. */
  bitly: { clicks: number; days: number; ourClicksSameDays: number } | null;
}

export interface NewsroomDashboard {
  /** When the figures were read. */
  at: Date;
  totals: WindowTotals[];
  window: DashboardWindow;
  topLinks: TopLinkRow[];
  byTag: GroupRow[];
  bySite: GroupRow[];
  /** By stored short domain ('' the default); the page shows it only when more than one is configured. */
  byDomain: GroupRow[];
  /** The window's readers' clicks by browser and by OS family (the newsroom's, every link). */
  families: FamilyTotals;
}

const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

/** The first and last UTC day of a window ending today. */
export function windowDays(window: DashboardWindow, now: Date): { fromDay: string; toDay: string } {
  const today = Date.parse(`${dayOf(now.getTime())}T00:00:00Z`);
  return { fromDay: dayOf(today - (WINDOW_DAYS[window] - 1) * DAY_MS), toDay: dayOf(today) };
}

/** Sums the days of `rows` within [fromDay, toDay]; `days` counts the days present. */
function sumDays(rows: DayTotal[], fromDay: string, toDay: string): { clicks: number; days: Set<string> } {
  let clicks = 0;
  const days = new Set<string>();
  for (const r of rows)
    if (r.day >= fromDay && r.day <= toDay) {
      clicks += r.clicks;
      days.add(r.day);
    }
  return { clicks, days };
}

/** The three windows' totals from the last 30 days' per-day sums (ours and Bitly's). */
export function windowTotals(ours: DayTotal[], bitly: DayTotal[], now: Date): WindowTotals[] {
  return DASHBOARD_WINDOWS.map((window) => {
    const { fromDay, toDay } = windowDays(window, now);
    const theirs = sumDays(bitly, fromDay, toDay);
    const sameDays = ours.filter((d) => theirs.days.has(d.day)).reduce((n, d) => n + d.clicks, 0);
    return {
      window,
      fromDay,
      toDay,
      clicks: sumDays(ours, fromDay, toDay).clicks,
      bitly:
        theirs.days.size === 0
          ? null
          : { clicks: theirs.clicks, days: theirs.days.size, ourClicksSameDays: sameDays },
    };
  });
}

/** Reads the dashboard; `cache` keeps each window's breakdown for DASHBOARD_CACHE_MS (one per web process). */
export function createNewsroomDashboard(db: Db, options: { cacheMs?: number } = {}) {
  const cacheMs = options.cacheMs ?? DASHBOARD_CACHE_MS;
  type Breakdown = Awaited<ReturnType<typeof getWindowBreakdown>> & { families: FamilyTotals };
  const kept = new Map<string, { until: number; value: Promise<Breakdown> }>();

  const breakdown = (fromDay: string, toDay: string, now: number) => {
    const key = `${fromDay}/${toDay}`;
    const hit = kept.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = Promise.all([
      getWindowBreakdown(db, fromDay, toDay, DASHBOARD_LIST_LIMIT),
      familyTotals(db, {
        from: new Date(`${fromDay}T00:00:00Z`),
        to: new Date(Date.parse(`${toDay}T00:00:00Z`) + DAY_MS),
      }),
    ]).then(([lists, families]): Breakdown => ({ ...lists, families }));
    // A failed read is not kept: the next request asks again.
    value.catch(() => kept.delete(key));
    for (const [k, v] of kept) if (v.until <= now) kept.delete(k);
    kept.set(key, { until: now + cacheMs, value });
    return value;
  };

  return async function readDashboard(window: DashboardWindow, now = new Date()): Promise<NewsroomDashboard> {
    const month = windowDays('30d', now);
    const chosen = windowDays(window, now);
    const [ours, bitly, parts] = await Promise.all([
      listClickDayTotals(db, month.fromDay, month.toDay),
      listVendorDayTotals(db, 'bitly', month.fromDay, month.toDay),
      breakdown(chosen.fromDay, chosen.toDay, now.getTime()),
    ]);
    return { at: now, totals: windowTotals(ours, bitly, now), window, ...parts };
  };
}
export type ReadNewsroomDashboard = ReturnType<typeof createNewsroomDashboard>;
