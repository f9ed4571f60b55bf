import { isPossibleLinkKey } from '../codes/code_rules.ts';
import { quoteForLog } from '../shared/log_safe.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { type CanonicalTargetPolicy, targetRuleProblem } from '../targets/target_rule.ts';

/** Refused rows a snapshot names (escaped, cut short) in its manifest and log; the counts are exact. */
const REFUSED_EXAMPLES = 20;

/** Rows a snapshot left out because they break a rule the redirect path applies: they answer 404 there too. */
export interface RefusedSnapshotRows {
  /** Codes no request can name (charset, length, a reserved word, `_`): a file name or a rule would be unsafe. */
  codeRule: number;
  /** Targets or fallbacks that are not canonical or that the deployment's target policy refuses. */
  targetRule: number;
  /** The first few, as `<quoted code>: <rule>`, printable ASCII. */
  examples: string[];
}

export function emptyRefusedRows(): RefusedSnapshotRows {
  return { codeRule: 0, targetRule: 0, examples: [] };
}

/**
 * Whether a stored row may enter a snapshot: its key passes the code rule (isPossibleLinkKey: a possible code,
 * after a host name on another short domain; what the redirect path asks before any lookup) and its target and fallback the target rule under the deployment's policy (what the
 * resolver re-checks on every stored record; such a code answers 404 live). A refused row is counted in `refused`
 * and left out of every format, so no code becomes a file name, a `_redirects` line or an nginx map key without
 * passing the code rule, and no Location is written that the live service would not send.
 */
export function admitSnapshotRow(
  row: Pick<LinkRow, 'code' | 'targetUrl' | 'expiredUrl'> & Partial<Pick<LinkRow, 'routingRules'>>,
  policy: CanonicalTargetPolicy,
  refused: RefusedSnapshotRows,
): boolean {
  let rule: 'code' | 'target' | 'fallback' | null = null;
  if (!isPossibleLinkKey(row.code)) rule = 'code';
  else if (targetRuleProblem(row.targetUrl, policy) !== null) rule = 'target';
  else if (row.expiredUrl !== null && targetRuleProblem(row.expiredUrl, policy) !== null) rule = 'fallback';
  // A rule target that breaks the rule makes the live resolver answer 404 for the whole code: so does the snapshot.
  else if (row.routingRules?.some((r) => targetRuleProblem(r.target, policy) !== null)) rule = 'target';
  if (rule === null) return true;
  if (rule === 'code') refused.codeRule++;
  else refused.targetRule++;
  if (refused.examples.length < REFUSED_EXAMPLES) {
    refused.examples.push(
      `${quoteForLog(row.code)}: ${rule === 'code' ? 'code rule' : `${rule === 'target' ? 'target' : 'fallback'} breaks the target rule`}`,
    );
  }
  return false;
}
