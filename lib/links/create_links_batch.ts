import { z } from 'zod';
import { queueArchiveCopies } from '../archive/archive_queue.ts';
import type { SafetyScanner } from '../safety/safety_scanner.ts';
import { type InitialSafety, judgeNewTargets } from '../safety/scan_new_targets.ts';
import { type AppError, ConflictError, type FieldError, ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { linkKey, type ShortDomains } from '../shared/link_key.ts';
import { toProblem } from '../shared/problem.ts';
import { findNulCharacter, NUL_PROBLEM, toFieldErrors } from '../shared/validation.ts';
import {
  insertLinksWithAudit,
  listCodesByPosts,
  listExistingCodes,
  listLinksByDedupeKeys,
  lockKeys,
} from '../stores/link_batch_store.ts';
import type { LinkRow } from '../stores/link_rows.ts';
import type { NewLink } from '../stores/link_store.ts';
import { enqueueLinkSyncs } from '../stores/link_sync_queue_store.ts';
import type { Sql } from '../stores/sql.ts';
import { linkEventData, recordWebhookEvents } from '../stores/webhook_outbox_store.ts';
import type { CanonicalTargetPolicy } from '../targets/target_rule.ts';
import { assertTargetsAllowed, type Creator, storedDomainForCreate } from './create_link.ts';
import { getDedupeKey } from './dedupe_key.ts';
import { batchLinkInputSchema, type CreateLinkInput, linkSchema } from './link.ts';
import { type ClaimOutcome, MINT_MAX_ATTEMPTS, mintCodes } from './mint.ts';
import { assertMayBindPost } from './post_link_rules.ts';

/** Most links one batch request may carry. */
export const BATCH_MAX_LINKS = 1000;

/** POST /api/v1/links/batch body; items are validated one by one so one bad item fails alone. */
export const createLinksBatchInputSchema = z.strictObject({
  links: z
    .array(z.unknown())
    .min(1, 'must hold at least one link')
    .max(BATCH_MAX_LINKS, `must hold at most ${BATCH_MAX_LINKS} links`),
});

/** RFC 9457 problem details, as every error answer carries them. */
export const problemSchema = z.looseObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  instance: z.string().optional(),
  errors: z
    .array(
      z.object({
        path: z.string(),
        message: z.string(),
        code: z.string().optional().describe('a stable code for the problem (lib/shared/field_problems.ts)'),
        args: z
          .record(z.string(), z.union([z.string(), z.number()]))
          .optional()
          .describe('the values in its text'),
      }),
    )
    .optional(),
});

/** POST /api/v1/links/batch answer: one result per input item, in input order. */
export const batchResultSchema = z.object({
  results: z.array(
    z.object({
      index: z.number().int(),
      status: z.number().int().describe('201 created, 200 existing (dedupe), 409 conflict, 422 invalid'),
      link: linkSchema.optional(),
      error: problemSchema.optional(),
    }),
  ),
});

/** One item's outcome, in input order: 201 created, 200 existing (dedupe), 409 or 422 with a problem. */
export type BatchItemResult =
  | { index: number; status: 200 | 201; link: LinkRow }
  | { index: number; status: number; error: ReturnType<typeof toProblem>['body'] };

interface Pending {
  index: number;
  input: CreateLinkInput;
  safety?: InitialSafety;
  dedupeKey: string | null;
  /** The stored short domain ('' the default); `code` is then the link's key there (lib/shared/link_key.ts). */
  domain: string;
  code: string;
}

/**
 * Creates up to BATCH_MAX_LINKS links with per-item results in input order. All valid items go to Postgres
 * in ONE insert statement (audit entries included); only minted codes that collided are re-minted, in one
 * more statement per round (rare). Dedupe, aliases and one-link-per-article behave exactly as for single
 * creation, within the batch too. One transaction: a failure of the database rolls the whole batch back. The
 * created codes are queued for the sync-queue drainer in the same transaction (the caller wakes it).
 */
export async function createLinksBatch(
  deps: {
    sql: Sql;
    codeLength: number;
    targetPolicy: CanonicalTargetPolicy;
    /** Scans every destination of the batch in one go (Safe Browsing takes 500 URLs a call). */
    safety?: SafetyScanner;
    /** The caller may bind links to WordPress posts (API scope admin); otherwise such an item is a 403. */
    mayManagePostLinks?: boolean;
    /** The deployment's short domains (an item's `domain` must be one); absent: the default only. */
    domains?: ShortDomains;
    /** ARCHIVE_MODE is not off: the created links are queued for their archived copy too (ADR 0076). */
    archiveCopies?: boolean;
    /**
     * Decide every item as the creation would, then roll the transaction back (a CSV import's dry run): the
     * answers are exact, nothing is written or queued, and a minted code is not kept.
     */
    dryRun?: boolean;
    now?: () => Date;
  },
  items: unknown[],
  creator: Creator,
): Promise<BatchItemResult[]> {
  const results: (BatchItemResult | undefined)[] = new Array(items.length);
  const fail = (index: number, error: AppError) => {
    results[index] = { index, status: error.status, error: toProblem(error, `links[${index}]`).body };
  };
  const now = deps.now?.() ?? new Date();
  const valid: Pending[] = [];
  for (const [index, item] of items.entries()) {
    const parsed = batchLinkInputSchema.safeParse(item);
    if (!parsed.success) {
      fail(index, new ValidationError(toFieldErrors(parsed.error)));
      continue;
    }
    const nul = findNulCharacter(item);
    if (nul !== null) {
      fail(index, new ValidationError([{ path: nul, message: NUL_PROBLEM }]));
      continue;
    }
    const input = parsed.data;
    let domain: string;
    try {
      assertMayBindPost(input, deps.mayManagePostLinks === true);
      assertTargetsAllowed(input, deps.targetPolicy);
      domain = storedDomainForCreate(deps.domains, input.domain);
    } catch (error) {
      fail(index, error as AppError);
      continue;
    }
    if (input.expiresAt && new Date(input.expiresAt).getTime() <= now.getTime()) {
      fail(index, new ValidationError([{ path: 'expiresAt', message: fieldProblem('future') }]));
      continue;
    }
    valid.push({ index, input, dedupeKey: await getDedupeKey(input, domain), domain, code: '' });
  }

  // The destinations, scanned together: a blocked one fails its item (422 naming the field), like one request.
  if (deps.safety && valid.length > 0) {
    const results = await deps.safety.scanMany(
      valid.flatMap((p) => [p.input.url, ...(p.input.expiredUrl ? [p.input.expiredUrl] : [])]),
    );
    let at = 0;
    const scannedOk: Pending[] = [];
    for (const p of valid) {
      const own = results.slice(at, at + (p.input.expiredUrl ? 2 : 1));
      at += own.length;
      try {
        p.safety = judgeNewTargets(own[0], p.input.expiredUrl ? own[1] : undefined, now) ?? undefined;
        scannedOk.push(p);
      } catch (error) {
        fail(p.index, error as AppError);
      }
    }
    valid.splice(0, valid.length, ...scannedOk);
  }

  // Within the batch: the first of equal dedupe keys is created, later ones answer with its link;
  // a repeated alias or article is a conflict, as it would be one request later.
  const firstByKey = new Map<string, Pending>();
  const sameAs = new Map<number, Pending>();
  const aliases = new Set<string>();
  const posts = new Set<string>();
  const toCreate: Pending[] = [];
  for (const p of valid) {
    if (p.dedupeKey) {
      const first = firstByKey.get(p.dedupeKey);
      if (first) {
        sameAs.set(p.index, first);
        continue;
      }
      firstByKey.set(p.dedupeKey, p);
    }
    if (p.input.alias !== undefined) {
      // An alias is taken per short domain.
      const aliasKey = linkKey(p.domain, p.input.alias);
      if (aliases.has(aliasKey)) {
        fail(p.index, aliasTaken(p.input.alias));
        continue;
      }
      aliases.add(aliasKey);
    }
    if (p.input.site !== undefined && p.input.postId !== undefined) {
      const post = `${p.input.site}|${p.input.postId}`;
      if (posts.has(post)) {
        fail(p.index, postTaken(p.input.site, p.input.postId, null));
        continue;
      }
      posts.add(post);
    }
    toCreate.push(p);
  }

  const created = new Map<number, LinkRow>();
  const rollback = new Error('dry run: rolled back');
  await deps.sql
    .begin(async (tx) => {
      const dedupeKeys = toCreate.flatMap((p) => (p.dedupeKey ? [p.dedupeKey] : []));
      await lockKeys(
        tx,
        dedupeKeys.map((k) => `${creator.owner}|${k}`),
      );
      const existing = new Map(
        (await listLinksByDedupeKeys(tx, creator.owner, dedupeKeys)).map((l) => [l.dedupeKey!, l]),
      );
      const postCodes = await listCodesByPosts(
        tx,
        toCreate.flatMap((p) =>
          p.input.site !== undefined && p.input.postId !== undefined
            ? [{ site: p.input.site, postId: p.input.postId }]
            : [],
        ),
      );
      const round = toCreate.filter((p) => {
        const found = p.dedupeKey ? existing.get(p.dedupeKey) : undefined;
        if (found) {
          results[p.index] = { index: p.index, status: 200, link: found };
          return false;
        }
        if (p.input.site !== undefined && p.input.postId !== undefined) {
          const code = postCodes.get(`${p.input.site}|${p.input.postId}`);
          if (code) {
            fail(p.index, postTaken(p.input.site, p.input.postId, code));
            return false;
          }
        }
        return true;
      });

      const outcomes = await mintCodes(round, {
        codeLength: deps.codeLength,
        aliasOf: (p) => p.input.alias,
        async claim(candidates) {
          for (const c of candidates) c.claimant.code = linkKey(c.claimant.domain, c.code);
          const inserted = await insertLinksWithAudit(
            tx,
            candidates.map((c) => toNewLink(c.claimant, creator)),
            { actor: creator.actor },
          );
          await recordWebhookEvents(
            tx,
            'link.created',
            inserted.map((l) => ({ data: linkEventData(l) })),
          );
          const byCode = new Map(inserted.map((l) => [l.code, l]));
          const missed = candidates.filter((c) => !byCode.has(c.claimant.code)).map((c) => c.claimant);
          // Find out why each was skipped: a taken alias, an article another transaction linked first, or
          // (otherwise) a minted code that collided and gets another draw.
          const taken = await listExistingCodes(
            tx,
            missed.flatMap((p) => (p.input.alias ? [p.code] : [])),
          );
          const linkedPosts = await listCodesByPosts(
            tx,
            missed.flatMap((p) =>
              p.input.site !== undefined && p.input.postId !== undefined
                ? [{ site: p.input.site, postId: p.input.postId }]
                : [],
            ),
          );
          return candidates.map(({ claimant: p }): ClaimOutcome<LinkRow, AppError> => {
            const link = byCode.get(p.code);
            if (link) return { claimed: link };
            if (p.input.alias !== undefined && taken.has(p.code)) return { taken: true };
            if (p.input.site !== undefined && p.input.postId !== undefined) {
              const linked = linkedPosts.get(`${p.input.site}|${p.input.postId}`);
              if (linked) return { refused: postTaken(p.input.site, p.input.postId, linked) };
            }
            return p.input.alias !== undefined ? { refused: noFreeCode() } : { taken: true };
          });
        },
        aliasTaken,
        exhausted: noFreeCode,
      });
      for (const [i, outcome] of outcomes.entries()) {
        const p = round[i]!;
        if ('refused' in outcome) fail(p.index, outcome.refused);
        else created.set(p.index, outcome.claimed);
      }
      // Their replicas follow through the sync queue (ADR 0024), their archived copies through the archive
      // queue (ADR 0076): queued with the rows, so none is ever lost.
      const codes = [...created.values()].map((l) => l.code);
      await enqueueLinkSyncs(tx, codes, `link.created by ${creator.actor}`, 'created');
      await queueArchiveCopies(tx, deps, codes, `link.created by ${creator.actor}`);
      if (deps.dryRun) throw rollback;
    })
    .catch((error: unknown) => {
      if (error !== rollback) throw error;
    });

  for (const [index, link] of created) results[index] = { index, status: 201, link };
  for (const [index, first] of sameAs) {
    const prior = results[first.index];
    if (prior && 'link' in prior) results[index] = { index, status: 200, link: prior.link };
    else if (prior) results[index] = { ...prior, index };
  }
  return results.map((r, index) => {
    if (!r) throw new Error(`batch item ${index} got no result`);
    return r;
  });
}

function toNewLink(p: Pending, creator: Creator): NewLink {
  return {
    code: p.code,
    targetUrl: p.input.url,
    status: 'active',
    origin: creator.origin,
    site: p.input.site ?? null,
    postId: p.input.postId ?? null,
    title: p.input.title ?? null,
    owner: creator.owner,
    expiresAt: p.input.expiresAt ? new Date(p.input.expiresAt) : null,
    expiredUrl: p.input.expiredUrl ?? null,
    redirectStatus: p.input.redirectStatus ?? null,
    tags: [...new Set(p.input.tags ?? [])],
    utmCampaign: p.input.utm?.campaign ?? null,
    utmSource: p.input.utm?.source ?? null,
    utmMedium: p.input.utm?.medium ?? null,
    dedupeKey: p.dedupeKey,
    ...p.safety,
  };
}

function aliasTaken(alias: string): ConflictError {
  const errors: FieldError[] = [{ path: 'alias', message: fieldProblem('taken') }];
  return new ConflictError(`The alias "${alias}" is taken.`, errors);
}

function postTaken(site: string, postId: number, code: string | null): ConflictError {
  return new ConflictError(
    `Post ${postId} of site ${site} already has ${code ? `the link ${code}` : 'a link in this batch'}.`,
    [
      {
        path: 'postId',
        message: code ? fieldProblem('postHasLink', { code }) : 'appears twice in this batch',
      },
    ],
  );
}

function noFreeCode(): ConflictError {
  return new ConflictError(`No free code after ${MINT_MAX_ATTEMPTS} attempts; try again.`);
}
