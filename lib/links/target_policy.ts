import {
  type CanonicalTarget,
  type CanonicalTargetPolicy,
  checkTarget,
  createCanonicalTargetPolicy,
  targetRuleProblem,
} from '../safety/canonical_url.ts';

/**
 * Deployment rules for where links may point: canonical host names of ALLOWED_TARGET_HOSTS (empty: any host)
 * and the short domain itself (a link to it would loop). One rule for every way a target enters — API, UI
 * forms, WordPress permalinks, Bitly imports — and for the redirect path, which re-applies it to stored
 * records (lib/safety/canonical_url.ts, `targetRuleProblem`).
 */
export type TargetPolicy = CanonicalTargetPolicy;

/** Builds the policy from configuration; throws naming ALLOWED_TARGET_HOSTS (or SHORT_BASE_URL) on a bad value. */
export function createTargetPolicy(config: {
  allowedTargetHosts: readonly string[];
  shortBaseUrl: string;
}): TargetPolicy {
  return createCanonicalTargetPolicy(config);
}

/**
 * Why `value` may not be stored as a target here, or null. `value` must already be canonical (what
 * `targetUrlSchema` hands on); anything else is refused as not canonical.
 */
export function targetPolicyProblem(value: string, policy: TargetPolicy): string | null {
  return targetRuleProblem(value, policy);
}

/** Canonicalises any string and applies the policy: for inputs that did not pass `targetUrlSchema`. */
export function checkTargetAgainstPolicy(value: string, policy: TargetPolicy): CanonicalTarget {
  return checkTarget(value, policy);
}
