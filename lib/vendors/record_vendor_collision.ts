import type { Logger } from '../shared/logger.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import type { Sql } from '../stores/sql.ts';
import { getVendorLink, updateVendorProblem } from '../stores/vendor_link_store.ts';

/**
 * The alert for a shared code a vendor will not hold: the vendor copy is marked `collision` (visible in the
 * API's vendors[]), audited and logged at error level. The code itself never changes (ADR 0008).
 */
export async function recordVendorCollision(
  deps: { sql: Sql; logger: Logger },
  input: { code: string; vendor: 'bitly'; detail: string },
): Promise<void> {
  const existing = await getVendorLink(deps.sql, input.code, input.vendor);
  if (existing?.state === 'collision' && existing.lastError === input.detail) return;
  await deps.sql.begin(async (tx) => {
    await updateVendorProblem(tx, input.code, input.vendor, { state: 'collision', error: input.detail });
    await insertAuditEntry(tx, {
      code: input.code,
      actor: 'system:vendor-sync',
      action: 'vendor.collision',
      after: { vendor: input.vendor, state: 'collision' },
      reason: input.detail,
    });
  });
  deps.logger.error(
    { alert: 'vendor_collision', code: input.code, vendor: input.vendor, detail: input.detail },
    'ALERT: the vendor will not hold our shared code; the code is kept, the vendor copy needs a human',
  );
}
