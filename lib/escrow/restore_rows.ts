import { isPossibleLinkKey } from '../codes/code_rules.ts';
import { routingRulesProblem } from '../redirect/serving_record.ts';
import { keyDomain } from '../shared/link_key.ts';
import { type CanonicalTargetPolicy, targetRuleProblem } from '../targets/target_rule.ts';
import { toShortId } from '../vendors/bitly.ts';
import type { EscrowFile } from './escrow_manifest.ts';

/** Why a restore left a row out. */
export type RestoreRule =
  /**
   * A link's code that no request can name (charset, length, a reserved word, `_`), or a key whose short domain
   * is not the row's own.
   */
  | 'code'
  /**
   * A link's target, fallback or routing rule target that is not canonical, or that this deployment's target
   * policy refuses (or rules in a shape the link model never writes).
   */
  | 'target'
  /** A vendor mapping whose id has no shape the vendor gives (Bitly `domain/back-half`; in-house: the code). */
  | 'vendor_id'
  /** A row of another table that belongs to a link the restore left out (or to no possible code). */
  | 'orphan';

/** Rows a restore left out, by table and by rule; the first few named by file and line (never by content). */
export interface RefusedRestoreRows {
  total: number;
  byTable: Record<string, number>;
  byRule: Partial<Record<RestoreRule, number>>;
  examples: string[];
}

const REFUSED_EXAMPLES = 20;

export function emptyRefusedRestoreRows(): RefusedRestoreRows {
  return { total: 0, byTable: {}, byRule: {}, examples: [] };
}

/**
 * The intake rules applied to one exported row before it is loaded (the export is a file anyone with access to
 * its folder may have edited): a link's code must pass the code rule and its target and fallback the target rule
 * under this deployment's policy, exactly as a new link would; a vendor mapping's id must have its vendor's shape;
 * a code-bound row of another table goes only with a link that was loaded. `refusedCodes` collects the codes of
 * links left out, so their rows elsewhere are left out too. Returns the rule a row breaks, or null.
 */
export function findRestoreRowProblem(
  table: EscrowFile['table'],
  row: Record<string, unknown>,
  policy: CanonicalTargetPolicy,
  refusedCodes: Set<string>,
): RestoreRule | null {
  const code = row.code;
  if (table === 'links') {
    const problem = findLinkProblem(row, policy);
    if (problem !== null && typeof code === 'string') refusedCodes.add(code);
    return problem;
  }
  if (table === 'blocklist') return null;
  // A webhook endpoint is loaded switched off (its secret is not exported); its URL must still be a URL.
  if (table === 'webhook_endpoints')
    return typeof row.url === 'string' && URL.canParse(row.url) ? null : 'target';
  // The audit log keeps entries that name no link (code null): they are history, not a way in.
  if (table === 'audit_log' && code === null) return null;
  if (typeof code !== 'string' || !isPossibleLinkKey(code) || refusedCodes.has(code)) return 'orphan';
  if (table === 'vendor_links' && !hasVendorIdShape(row.vendor, row.vendor_id, code)) return 'vendor_id';
  return null;
}

function findLinkProblem(row: Record<string, unknown>, policy: CanonicalTargetPolicy): RestoreRule | null {
  // A key on another short domain (ADR 0078) must carry the row's own domain; an export from before several
  // domains has no `domain` column, and every key in it is a code on the default one.
  if (typeof row.code !== 'string' || !isPossibleLinkKey(row.code)) return 'code';
  if ((row.domain ?? '') !== keyDomain(row.code)) return 'code';
  if (typeof row.target_url !== 'string' || targetRuleProblem(row.target_url, policy) !== null)
    return 'target';
  const fallback = row.expired_url;
  if (fallback !== null && fallback !== undefined) {
    if (typeof fallback !== 'string' || targetRuleProblem(fallback, policy) !== null) return 'target';
  }
  // Routing rules (ADR 0080): a list the link model could have written, each target under the same rule.
  const rules = row.routing_rules;
  if (rules === null || rules === undefined) return null;
  if (routingRulesProblem(rules) !== null) return 'target';
  for (const rule of rules as { target: string }[]) {
    if (targetRuleProblem(rule.target, policy) !== null) return 'target';
  }
  return null;
}

/** A vendor id as the vendor hands it out: none yet (pending), Bitly's canonical `domain/back-half`, or the code. */
function hasVendorIdShape(vendor: unknown, vendorId: unknown, code: string): boolean {
  if (vendorId === null || vendorId === undefined) return true;
  if (typeof vendorId !== 'string') return false;
  if (vendor === 'bitly') return toShortId(vendorId) === vendorId;
  if (vendor === 'inhouse') return vendorId === code;
  return false;
}

/** Counts one refused row (`line` of `file`). */
export function countRefusedRow(
  refused: RefusedRestoreRows,
  file: EscrowFile,
  line: number,
  rule: RestoreRule,
): void {
  refused.total++;
  refused.byTable[file.table] = (refused.byTable[file.table] ?? 0) + 1;
  refused.byRule[rule] = (refused.byRule[rule] ?? 0) + 1;
  if (refused.examples.length < REFUSED_EXAMPLES) refused.examples.push(`${file.name} line ${line}: ${rule}`);
}
