import type { SafetyScanner } from '../safety/safety_scanner.ts';
import { type InitialSafety, scanNewTargets } from '../safety/scan_new_targets.ts';
import { ConflictError, ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { DEFAULT_DOMAIN, linkKey, type ShortDomains, storedDomainFromInput } from '../shared/link_key.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import { getLinkByCode, getLinkByDedupeKey, getLinkByPost, insertLink } from '../stores/link_store.ts';
import type { Sql, Tx } from '../stores/sql.ts';
import { linkEventData, recordWebhookEvent } from '../stores/webhook_outbox_store.ts';
import { type CanonicalTargetPolicy, targetRuleProblem } from '../targets/target_rule.ts';
import { getDedupeKey } from './dedupe_key.ts';
import type { CreateLinkInput, LinkOrigin } from './link.ts';
import { MINT_MAX_ATTEMPTS, mintOneCode } from './mint.ts';
import { assertMayBindPost } from './post_link_rules.ts';
import { toStoredRules } from './routing_rules.ts';

/** Who is creating: `owner` scopes dedupe; `actor` goes to the audit log. */
export interface Creator {
  owner: string;
  actor: string;
  origin: LinkOrigin;
}

export interface CreateLinkDeps {
  sql: Sql;
  codeLength: number;
  targetPolicy: CanonicalTargetPolicy;
  /** Scans the destination before insert (blocked → 422, warn → created with the interstitial). */
  safety?: SafetyScanner;
  /** The caller may bind links to WordPress posts (API scope admin); otherwise site/postId is a 403. */
  mayManagePostLinks?: boolean;
  /** The deployment's short domains (a link's `domain` must be one); absent: the default domain only. */
  domains?: ShortDomains;
  now?: () => Date;
}

/**
 * The stored domain a creation names ('' the default), or a 422 naming `domain` for one that is not configured.
 * Without the deployment's domains only the default is known.
 */
export function storedDomainForCreate(domains: ShortDomains | undefined, domain: string | undefined): string {
  if (domain === undefined) return DEFAULT_DOMAIN;
  const stored = domains ? storedDomainFromInput(domains, domain) : undefined;
  if (stored === undefined) {
    throw new ValidationError([{ path: 'domain', message: fieldProblem('unknownDomain') }]);
  }
  return stored;
}

export interface CreateLinkResult {
  link: LinkRow;
  /** False when an existing link was returned (dedupe): the API answers 200 instead of 201. */
  created: boolean;
}

/** Rejects targets the deployment does not allow (ALLOWED_TARGET_HOSTS, our own short host). */
export function assertTargetsAllowed(
  input: Pick<CreateLinkInput, 'url' | 'expiredUrl' | 'rules'>,
  policy: CanonicalTargetPolicy,
): void {
  const errors = [];
  const urlProblem = targetRuleProblem(input.url, policy);
  if (urlProblem) errors.push({ path: 'url', message: urlProblem });
  if (input.expiredUrl) {
    const problem = targetRuleProblem(input.expiredUrl, policy);
    if (problem) errors.push({ path: 'expiredUrl', message: problem });
  }
  errors.push(...ruleTargetProblems(input.rules, policy));
  if (errors.length > 0) throw new ValidationError(errors, 'The target is not allowed.');
}

/** Each routing rule target the deployment does not allow, named `rules.{i}.target` (the url's rule, ADR 0080). */
export function ruleTargetProblems(
  rules: readonly { target: string }[] | null | undefined,
  policy: CanonicalTargetPolicy,
): { path: string; message: string }[] {
  const errors: { path: string; message: string }[] = [];
  (rules ?? []).forEach((rule, i) => {
    const problem = targetRuleProblem(rule.target, policy);
    if (problem) errors.push({ path: `rules.${i}.target`, message: problem });
  });
  return errors;
}

/**
 * Creates a link inside one transaction: dedupe on (owner, url, options), mint with bounded re-mint on a
 * code collision (the UNIQUE key decides), 409 for a taken alias or an article that already has its link,
 * and an audit entry. Nothing is half-written: any failure rolls the whole creation back.
 */
export async function createLink(
  deps: CreateLinkDeps,
  input: CreateLinkInput,
  creator: Creator,
): Promise<CreateLinkResult> {
  assertMayBindPost(input, deps.mayManagePostLinks === true);
  assertTargetsAllowed(input, deps.targetPolicy);
  const domain = storedDomainForCreate(deps.domains, input.domain);
  const now = deps.now?.() ?? new Date();
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
  if (expiresAt && expiresAt.getTime() <= now.getTime()) {
    throw new ValidationError([{ path: 'expiresAt', message: fieldProblem('future') }]);
  }
  // Outside the transaction: the scan may call Safe Browsing, and no row lock should wait on it.
  const safety: InitialSafety | null = deps.safety ? await scanNewTargets(deps.safety, input, now) : null;
  const dedupeKey = await getDedupeKey(input, domain);
  return deps.sql.begin(async (tx) => {
    if (dedupeKey) {
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`${creator.owner}|${dedupeKey}`}, 0))`;
      const existing = await getLinkByDedupeKey(tx, creator.owner, dedupeKey);
      if (existing) return { link: existing, created: false };
    }
    if (input.site !== undefined && input.postId !== undefined) {
      const existing = await getLinkByPost(tx, input.site, input.postId);
      if (existing) {
        throw new ConflictError(
          `Post ${input.postId} of site ${input.site} already has the link ${existing.code}.`,
          [{ path: 'postId', message: fieldProblem('postHasLink', { code: existing.code }) }],
        );
      }
    }
    const link = await insertWithMint(tx, deps.codeLength, input.alias, domain, (key) => ({
      code: key,
      targetUrl: input.url,
      status: 'active',
      origin: creator.origin,
      site: input.site ?? null,
      postId: input.postId ?? null,
      title: input.title ?? null,
      owner: creator.owner,
      expiresAt,
      expiredUrl: input.expiredUrl ?? null,
      redirectStatus: input.redirectStatus ?? null,
      tags: [...new Set(input.tags ?? [])],
      utmCampaign: input.utm?.campaign ?? null,
      utmSource: input.utm?.source ?? null,
      utmMedium: input.utm?.medium ?? null,
      routingRules: toStoredRules(input.rules),
      dedupeKey,
      ...safety,
    }));
    await insertAuditEntry(tx, {
      code: link.code,
      actor: creator.actor,
      action: 'link.created',
      after: {
        url: link.targetUrl,
        status: link.status,
        origin: link.origin,
        safety: link.safety,
        ...(link.title !== null ? { title: link.title } : {}),
        ...(input.utm && Object.keys(input.utm).length > 0 ? { utm: input.utm } : {}),
        ...(link.routingRules ? { rules: link.routingRules } : {}),
      },
      ...(link.safetyReason ? { reason: `safety ${link.safety}: ${link.safetyReason}` } : {}),
    });
    await recordWebhookEvent(tx, 'link.created', linkEventData(link));
    return { link, created: true };
  });
}

/**
 * Inserts with `alias`, or with freshly minted codes until one is free (the minting loop, lib/links/mint.ts), on
 * the short domain `domain` ('' the default): `build` gets the link's key there (lib/shared/link_key.ts), so a
 * code is taken or free per domain. A taken alias is a 409; so is a (site, post) pair that another transaction
 * took first.
 */
export async function insertWithMint(
  tx: Tx,
  codeLength: number,
  alias: string | undefined,
  domain: string,
  build: (key: string) => Parameters<typeof insertLink>[1],
): Promise<LinkRow> {
  const { claimed } = await mintOneCode<LinkRow>({
    codeLength,
    alias,
    async claim(code) {
      const values = build(linkKey(domain, code));
      const link = await insertLink(tx, values);
      if (link) return { claimed: link };
      if (
        values.site != null &&
        values.postId != null &&
        (await getLinkByPost(tx, values.site, values.postId))
      ) {
        return {
          refused: new ConflictError(`Post ${values.postId} of site ${values.site} already has a link.`),
        };
      }
      if (alias && !(await getLinkByCode(tx, linkKey(domain, alias)))) return { refused: noFreeCode() };
      return { taken: true };
    },
    aliasTaken: (taken) =>
      new ConflictError(`The alias "${taken}" is taken.`, [
        { path: 'alias', message: fieldProblem('taken') },
      ]),
    exhausted: noFreeCode,
  });
  return claimed;
}

function noFreeCode(): ConflictError {
  return new ConflictError(
    `No free code after ${MINT_MAX_ATTEMPTS} attempts; try again or raise CODE_LENGTH.`,
  );
}
