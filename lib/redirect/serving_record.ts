import { z } from 'zod';
import { LINK_STATUSES, type LinkRow, SAFETY_VERDICTS } from '../stores/link_rows.ts';

/** A link's own UTM values (each present only when set). */
export const servingUtmSchema = z.object({
  campaign: z.string().optional(),
  source: z.string().optional(),
  medium: z.string().optional(),
});
export type ServingUtm = z.infer<typeof servingUtmSchema>;

/**
 * What the resolver needs to answer a redirect: small, serialisable, the same in the LRU and the
 * serving store. Times are epoch milliseconds. `utm` is absent for a link without UTM values of its own
 * (and in records written before it existed, which therefore still parse).
 */
export const servingRecordSchema = z.object({
  code: z.string(),
  url: z.string(),
  status: z.enum(LINK_STATUSES),
  safety: z.enum(SAFETY_VERDICTS),
  redirectStatus: z.number().nullable(),
  expiresAt: z.number().nullable(),
  expiredUrl: z.string().nullable(),
  utm: servingUtmSchema.optional(),
  version: z.number(),
});
export type ServingRecord = z.infer<typeof servingRecordSchema>;

/** The link's own UTM values, or undefined when it has none. */
export function toServingUtm(
  row: Pick<LinkRow, 'utmCampaign' | 'utmSource' | 'utmMedium'>,
): ServingUtm | undefined {
  // Values are never empty (the schema and a CHECK refuse it): falsy means unset.
  if (!row.utmCampaign && !row.utmSource && !row.utmMedium) return undefined;
  return {
    ...(row.utmCampaign ? { campaign: row.utmCampaign } : {}),
    ...(row.utmSource ? { source: row.utmSource } : {}),
    ...(row.utmMedium ? { medium: row.utmMedium } : {}),
  };
}

/** Projects a stored row to its serving record. */
export function toServingRecord(row: LinkRow): ServingRecord {
  const utm = toServingUtm(row);
  return {
    code: row.code,
    url: row.targetUrl,
    status: row.status,
    safety: row.safety,
    redirectStatus: row.redirectStatus,
    expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
    expiredUrl: row.expiredUrl,
    ...(utm ? { utm } : {}),
    version: row.version,
  };
}
