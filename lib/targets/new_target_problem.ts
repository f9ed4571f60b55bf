import { canonicalizeTarget, TARGET_PROBLEMS } from './canonical_url.ts';
import { type CanonicalTargetPolicy, checkTarget } from './target_rule.ts';

/**
 * Why `url` may not become a link's target here, or null: the same rule as every other way in (a canonical form,
 * then the deployment's target policy: ALLOWED_TARGET_HOSTS, never the short domain). Backfill, WordPress
 * reconciliation and mass retargets all ask this one function, and pass the canonical form (toCanonicalTarget):
 * a URL that is not already canonical is refused here, so nothing non-canonical is ever stored.
 */
export function newTargetProblem(url: string, policy: CanonicalTargetPolicy): string | null {
  const checked = checkTarget(url, policy);
  if (!checked.ok) return checked.problem;
  return checked.url === url ? null : TARGET_PROBLEMS.notCanonical;
}

/**
 * The canonical form of `url` when it has one, else `url` as it is (newTargetProblem then says why it is
 * refused). For inputs checked per item rather than refused whole: permalinks of a backfill batch or a listing
 * page, a retarget's CSV rows and rewritten URLs.
 */
export function toCanonicalTarget(url: string): string {
  const canonical = canonicalizeTarget(url);
  return canonical.ok ? canonical.url : url;
}
