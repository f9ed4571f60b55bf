// The stored-target review (docs/adr/0017-hostile-input-and-abuse.md): links stored before the one target rule
// may hold a target in a form every parser does not read alike, or one the deployment's policy no
// longer allows. At start-up, once per rule version and policy, every stored target is read again:
//   - a target whose canonical form differs only in spelling (case, a trailing dot, a default port, punycode,
//     percent-encoding as WHATWG writes it) is rewritten to it: every browser already went exactly there;
//   - a target with no canonical form (a backslash, userinfo, an odd IPv4 form…) or one the policy refuses
//     (ALLOWED_TARGET_HOSTS, the short domain) is NOT changed: it is reported (error log with an `alert`
//     field, an audit entry on the link, the summary in settings), and the redirect path answers it 404
//     (counted as `tampered`) until an editor fixes it.

import type { Logger } from '../shared/logger.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import { deleteSetting, getSetting, upsertSetting } from '../stores/settings_store.ts';
import type { Sql } from '../stores/sql.ts';
import { listStoredTargets, updateStoredTarget } from '../stores/target_review_store.ts';
import { canonicalizeTarget } from '../targets/canonical_url.ts';
import { type CanonicalTargetPolicy, targetRuleProblem } from '../targets/target_rule.ts';

/** Settings key of the last review's summary (and what it ran under). */
export const TARGET_REVIEW_SETTING = 'stored_target_review';
/** Bumped whenever canonical_url.ts changes what it accepts or how it writes a URL: the review runs again. */
export const TARGET_RULE_VERSION = 1;
/** Codes listed in the stored summary, at most (the audit log has every one). */
const LISTED_MAX = 1000;
const PAGE = 1000;
const ACTOR = 'system:target-review';

/** A stored target the review could not make servable. */
export interface RefusedTarget {
  code: string;
  field: 'url' | 'expiredUrl';
  problem: string;
}

/** What a review found; also what settings keep (under TARGET_REVIEW_SETTING). */
export interface TargetReviewSummary {
  ruleVersion: number;
  /** The policy it ran under: allowed hosts and the short domain, canonical. */
  policy: string;
  ranAt: string;
  /** Links read. */
  read: number;
  /** Targets or fallbacks rewritten to their canonical form. */
  canonicalised: number;
  /** Targets or fallbacks left as they are, answered 404 until fixed: no canonical form, or off policy. */
  refused: number;
  /** The first LISTED_MAX of them. */
  refusedTargets: RefusedTarget[];
}

function describePolicy(policy: CanonicalTargetPolicy): string {
  return `allowed=${policy.allowedHosts.join(',') || '*'};short=${policy.shortHost}:${policy.shortPort}`;
}

/**
 * Runs the review unless it already ran under this rule version and policy (then returns null at the cost of
 * one settings read). Idempotent and safe to run from several processes at once: each rewrite is guarded by the
 * value it replaces.
 */
export async function reviewStoredTargets(
  sql: Sql,
  policy: CanonicalTargetPolicy,
  logger: Logger,
): Promise<TargetReviewSummary | null> {
  const description = describePolicy(policy);
  const isDone = async () => {
    const last = await getSetting<TargetReviewSummary>(sql, TARGET_REVIEW_SETTING);
    return last?.ruleVersion === TARGET_RULE_VERSION && last.policy === description;
  };
  if (await isDone()) return null;
  // One process reviews; replicas starting beside it wait, then find the review done.
  const lock = await sql.reserve();
  try {
    // The review's advisory lock key (the bootstrap's is ...965).
    await lock`SELECT pg_advisory_lock(7241865325823966)`;
    if (await isDone()) return null;
    return await review(sql, policy, description, logger);
  } finally {
    await lock`SELECT pg_advisory_unlock(7241865325823966)`.catch(() => {});
    lock.release();
  }
}

/**
 * Forgets that the review ran, so the next start runs it again: links were loaded around every way in (an escrow
 * restore loads them exactly as exported, and a restore must stay byte-faithful).
 */
export async function forgetStoredTargetReview(sql: Sql): Promise<void> {
  await deleteSetting(sql, TARGET_REVIEW_SETTING);
}

async function review(
  sql: Sql,
  policy: CanonicalTargetPolicy,
  description: string,
  logger: Logger,
): Promise<TargetReviewSummary> {
  const summary: TargetReviewSummary = {
    ruleVersion: TARGET_RULE_VERSION,
    policy: description,
    ranAt: new Date().toISOString(),
    read: 0,
    canonicalised: 0,
    refused: 0,
    refusedTargets: [],
  };
  let cursor = '';
  for (;;) {
    const page = await listStoredTargets(sql, cursor, PAGE);
    if (page.length === 0) break;
    summary.read += page.length;
    cursor = page.at(-1)!.code;
    for (const link of page) {
      for (const [field, value] of [
        ['url', link.targetUrl],
        ['expiredUrl', link.expiredUrl],
      ] as const) {
        if (value === null) continue;
        await reviewOne(sql, policy, summary, logger, { code: link.code, field, value });
      }
    }
  }
  await upsertSetting(sql, TARGET_REVIEW_SETTING, summary);
  const log = summary.refused > 0 ? logger.error.bind(logger) : logger.info.bind(logger);
  log(
    {
      ...(summary.refused > 0 ? { alert: 'unservable_targets' } : {}),
      read: summary.read,
      canonicalised: summary.canonicalised,
      refused: summary.refused,
      ruleVersion: TARGET_RULE_VERSION,
      policy: description,
    },
    summary.refused > 0
      ? 'stored targets reviewed: some break the target rule and answer 404 until an editor fixes them'
      : 'stored targets reviewed',
  );
  return summary;
}

async function reviewOne(
  sql: Sql,
  policy: CanonicalTargetPolicy,
  summary: TargetReviewSummary,
  logger: Logger,
  target: { code: string; field: 'url' | 'expiredUrl'; value: string },
): Promise<void> {
  const canonical = canonicalizeTarget(target.value);
  if (canonical.ok && canonical.url !== target.value) {
    const written = await sql.begin(async (tx) => {
      const done = await updateStoredTarget(tx, {
        code: target.code,
        field: target.field === 'url' ? 'targetUrl' : 'expiredUrl',
        before: target.value,
        after: canonical.url,
      });
      if (done) {
        await insertAuditEntry(tx, {
          code: target.code,
          actor: ACTOR,
          action: 'link.target_canonicalised',
          before: { [target.field]: target.value },
          after: { [target.field]: canonical.url },
          reason: 'the same destination, written in the one form every URL parser reads alike',
        });
      }
      return done;
    });
    if (written) summary.canonicalised++;
  }
  const problem = canonical.ok ? targetRuleProblem(canonical.url, policy) : canonical.problem;
  if (problem === null) return;
  summary.refused++;
  if (summary.refusedTargets.length < LISTED_MAX) {
    summary.refusedTargets.push({ code: target.code, field: target.field, problem });
  }
  logger.error(
    { alert: 'unservable_target', code: target.code, field: target.field, problem },
    'a stored target breaks the target rule; the link answers 404 until it is fixed',
  );
  await insertAuditEntry(sql, {
    code: target.code,
    actor: ACTOR,
    action: 'link.target_refused',
    before: { [target.field]: target.value },
    reason: `${target.field} ${problem}; the link answers 404 until it is given an allowed target`,
  });
}
