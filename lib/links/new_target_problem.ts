import { targetUrlProblem } from './link.ts';
import { type TargetPolicy, targetPolicyProblem } from './target_policy.ts';

/**
 * Why `url` may not become a link's target here, or null: the same rules as every other way in (the API's
 * targetUrlSchema, then the deployment's target policy). Backfill, WordPress reconciliation and mass retargets
 * all ask this one function, so switching them to lib/safety/canonical_url.ts is a change in one place.
 */
export function newTargetProblem(url: string, policy: TargetPolicy): string | null {
  return targetUrlProblem(url) ?? targetPolicyProblem(url, policy);
}
