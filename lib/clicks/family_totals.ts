// Readers' clicks by browser and OS family over a window: one link's (its stats page, its CSV) or every link's
// (the newsroom's dashboard).
import { z } from 'zod';
import { listFamilyClicks } from '../stores/click_stats_store.ts';
import type { Db } from '../stores/sql.ts';
import { BROWSER_FAMILIES, OS_FAMILIES } from './agent_family.ts';

export const browserFamilySchema = z
  .enum(BROWSER_FAMILIES)
  .describe(
    'browser family: webview is an app’s own view that names no browser; facebook, instagram, telegram, snapchat, tiktok and linkedin are those apps’ in-app browsers',
  );
export const osFamilySchema = z.enum(OS_FAMILIES).describe('operating system family');

/** Readers' clicks (human and QR) by browser family and by OS family, most first. */
export const familyTotalsSchema = z.object({
  fromDay: z.iso.date().describe('the first UTC day counted'),
  toDay: z.iso.date().describe('the last UTC day counted'),
  byBrowser: z.array(z.object({ family: browserFamilySchema, clicks: z.number().int() })),
  byOs: z.array(z.object({ family: osFamilySchema, clicks: z.number().int() })),
});
export type FamilyTotals = z.infer<typeof familyTotalsSchema>;

/** The UTC days a window [from, to) touches: families are counted per day, so a partial day counts whole. */
export function familyDays(range: { from: Date; to: Date }): { fromDay: string; toDay: string } {
  const last = Math.max(range.from.getTime(), range.to.getTime() - 1);
  return {
    fromDay: range.from.toISOString().slice(0, 10),
    toDay: new Date(last).toISOString().slice(0, 10),
  };
}

/**
 * Readers' clicks by browser and OS family over the UTC days the window [from, to) touches, for one link (`key`:
 * its key, the code or `{domain}/{code}`) or every link (no key: the newsroom's totals). Bots, previews and HEAD
 * requests are not counted, as in every readers' figure. Reads click_families (migration 0125) only: no raw
 * User-Agent exists anywhere to read.
 */
export async function familyTotals(
  sql: Db,
  options: { from: Date; to: Date; key?: string },
): Promise<FamilyTotals> {
  const { fromDay, toDay } = familyDays(options);
  const [browsers, systems] = await Promise.all([
    listFamilyClicks(sql, 'browser', fromDay, toDay, options.key),
    listFamilyClicks(sql, 'os', fromDay, toDay, options.key),
  ]);
  return {
    fromDay,
    toDay,
    byBrowser: browsers.map((r) => ({ family: asBrowser(r.key), clicks: r.clicks })),
    byOs: systems.map((r) => ({ family: asOs(r.key), clicks: r.clicks })),
  };
}

// A family a newer release stored and this one does not know reads as `other` (the rows stay).
function asBrowser(key: string): FamilyTotals['byBrowser'][number]['family'] {
  return (BROWSER_FAMILIES as readonly string[]).includes(key) ? (key as never) : 'other';
}
function asOs(key: string): FamilyTotals['byOs'][number]['family'] {
  return (OS_FAMILIES as readonly string[]).includes(key) ? (key as never) : 'other';
}
