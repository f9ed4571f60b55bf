import { isPossibleCode } from '../codes/code_rules.ts';
import type { SafetyVerdict } from '../links/link.ts';
import { PermanentFailure } from '../shared/errors.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import { insertLink } from '../stores/link_store.ts';
import { upsertVendorMapping } from '../stores/reconcile_store.ts';
import type { Sql } from '../stores/sql.ts';
import { canonicalizeTarget } from '../targets/canonical_url.ts';
import { type CanonicalTargetPolicy, checkTarget } from '../targets/target_rule.ts';
import type { VendorLink, VendorName } from '../vendors/short_link_provider.ts';

/** Owner of links imported from a vendor (made there by hand, never through us). */
export const IMPORT_OWNER = 'import:bitly';

/**
 * Why a vendor's back-half cannot become one of our codes, or null when it can: its long URL obeys the one
 * target rule like any other way in (a canonical form, ALLOWED_TARGET_HOSTS, not the short domain).
 */
export function importProblem(code: string, longUrl: string, policy: CanonicalTargetPolicy): string | null {
  if (!isPossibleCode(code)) return `"${code}" is not a usable code (charset, length or a reserved word)`;
  const checked = checkTarget(longUrl, policy);
  return checked.ok ? null : `its long URL ${checked.problem}`;
}

/** The canonical form of an importable long URL (importProblem said yes); what is stored and scanned. */
export function toImportTarget(longUrl: string): string {
  const canonical = canonicalizeTarget(longUrl);
  if (!canonical.ok) throw new PermanentFailure(`the long URL ${canonical.problem}`);
  return canonical.url;
}

/**
 * Imports a link that exists only on the vendor, under its own back-half, so our resolver knows every link
 * in the wild: active (or gone, if the vendor has it archived), origin `import`, the vendor mapping synced,
 * audited with `reason` (the run). Returns false when the code already exists (a retry, or a race with a
 * mint): the UNIQUE key decides, nothing is half-written.
 */
export async function importVendorLink(
  sql: Sql,
  input: {
    code: string;
    vendor: VendorName;
    link: VendorLink;
    safety: { safety: SafetyVerdict; safetyReason: string | null; safetyCheckedAt: Date | null };
    reason: string;
  },
): Promise<boolean> {
  return sql.begin(async (tx) => {
    const row = await insertLink(tx, {
      code: input.code,
      targetUrl: toImportTarget(input.link.longUrl),
      status: input.link.archived ? 'gone' : 'active',
      origin: 'import',
      owner: IMPORT_OWNER,
      title: input.link.title,
      ...input.safety,
    });
    if (!row) return false;
    await upsertVendorMapping(tx, {
      code: input.code,
      vendor: input.vendor,
      vendorId: input.link.vendorId,
      syncedUrl: input.link.longUrl,
    });
    await insertAuditEntry(tx, {
      code: input.code,
      actor: `system:import`,
      action: 'link.imported',
      after: { url: row.targetUrl, status: row.status, vendor: input.vendor, vendorId: input.link.vendorId },
      reason: input.reason,
    });
    return true;
  });
}
