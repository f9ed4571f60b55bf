// Serving records for tests: an active, clean link with no expiry, no UTM values, no fallback and no rules (the
// shape most tests start from), with whatever a test changes.
import type { ServingRecord } from '../../lib/redirect/serving_record.ts';

/** An active, clean, never-expiring record of `code` leading to `url`, version 1, with `overrides` applied. */
export function activeRecord(
  code: string,
  url: string,
  overrides: Partial<ServingRecord> = {},
): ServingRecord {
  return {
    code,
    url,
    status: 'active',
    safety: 'clean',
    redirectStatus: null,
    expiresAt: null,
    expiredUrl: null,
    version: 1,
    ...overrides,
  };
}
