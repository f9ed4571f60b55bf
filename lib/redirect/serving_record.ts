import { z } from 'zod';
import { LINK_STATUSES, type LinkRow, SAFETY_VERDICTS } from '../stores/link_rows.ts';

/**
 * What the resolver needs to answer a redirect: small, serialisable, the same in the LRU and the
 * serving store. Times are epoch milliseconds.
 */
export const servingRecordSchema = z.object({
  code: z.string(),
  url: z.string(),
  status: z.enum(LINK_STATUSES),
  safety: z.enum(SAFETY_VERDICTS),
  redirectStatus: z.number().nullable(),
  expiresAt: z.number().nullable(),
  expiredUrl: z.string().nullable(),
  version: z.number(),
});
export type ServingRecord = z.infer<typeof servingRecordSchema>;

/** Projects a stored row to its serving record. */
export function toServingRecord(row: LinkRow): ServingRecord {
  return {
    code: row.code,
    url: row.targetUrl,
    status: row.status,
    safety: row.safety,
    redirectStatus: row.redirectStatus,
    expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
    expiredUrl: row.expiredUrl,
    version: row.version,
  };
}
