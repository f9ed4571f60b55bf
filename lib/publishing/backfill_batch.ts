import { z } from 'zod';
import {
  importedTitleSchema,
  postIdSchema,
  siteSchema,
  TARGET_URL_MAX_BYTES,
  targetUrlProblem,
} from '../links/link.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { toCanonicalTarget } from '../targets/new_target_problem.ts';
import { installationIdSchema, lenientGuid, lenientKnownCode } from './wordpress_event.ts';

/** Most posts the plugin sends in one batch (its --batch-size is 1..500). */
export const BACKFILL_BATCH_MAX_POSTS = 500;

const isoSecond = z.iso.datetime({ offset: true, message: fieldProblem('isoDate') });
const utf8 = new TextEncoder();

/**
 * One post of a batch (integrations/wordpress/CONTRACT.md §1). The permalink is checked per post, not here: a
 * bad permalink gets that post a `rejected` answer instead of refusing the whole batch (which would stop the
 * plugin's run until someone fixed the post).
 */
export const backfillPostSchema = z.object({
  postId: postIdSchema,
  // In canonical form when it has one (what links store and are compared in); refused per post otherwise.
  permalink: z
    .string()
    .max(4 * TARGET_URL_MAX_BYTES)
    .transform(toCanonicalTarget),
  title: importedTitleSchema.optional(),
  publishedAt: isoSecond,
  modifiedAt: isoSecond,
  knownShortUrl: z
    .string()
    .refine((v) => utf8.encode(v).length <= TARGET_URL_MAX_BYTES && /^https?:\/\//i.test(v), {
      message: 'must be an absolute http(s) URL of at most 2,048 bytes',
    })
    .optional(),
  /** The code the post claims (ADR 0057); a malformed one is ignored for this post. */
  knownCode: lenientKnownCode,
  guid: lenientGuid,
});
export type BackfillPost = z.infer<typeof backfillPostSchema>;

/** The signed bulk body: `POST /api/v1/hooks/wordpress/backfill`. */
export const backfillBatchSchema = z
  .object({
    id: z.string().min(1).max(200),
    run: z
      .string()
      .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID'),
    site: siteSchema,
    batch: z.number().int().min(1).max(10_000_000),
    dryRun: z.boolean(),
    final: z.boolean(),
    total: z.number().int().min(0).max(100_000_000),
    restUrl: z.string().superRefine((value, ctx) => {
      const problem = targetUrlProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    installationId: installationIdSchema.optional(),
    posts: z.array(backfillPostSchema).max(BACKFILL_BATCH_MAX_POSTS, 'at most 500 posts per batch'),
  })
  .superRefine((batch, ctx) => {
    // Strictly ascending post IDs (the contract's order): a duplicate would be answered twice.
    for (let i = 1; i < batch.posts.length; i++) {
      if (batch.posts[i]!.postId <= batch.posts[i - 1]!.postId) {
        ctx.addIssue({
          code: 'custom',
          path: ['posts', i, 'postId'],
          message: 'post IDs must be strictly ascending',
        });
        return;
      }
    }
  });
export type BackfillBatch = z.infer<typeof backfillBatchSchema>;

/** What the plugin counts (CONTRACT.md §1): these and their `would-` forms succeed; anything else failed. */
export type BackfillOutcome =
  | 'minted'
  | 'kept'
  | 'adopted'
  | 'would-mint'
  | 'would-keep'
  | 'would-adopt'
  /** The permalink is not an acceptable target (not http(s), too long, our own short host…). */
  | 'rejected'
  /** Published in the future, or unpublished after this batch was read: WordPress says it is not public. */
  | 'not-published'
  /** The destination is blocked by the safety rules: the link exists but stays pending (as on publish). */
  | 'blocked'
  /** The post's link was deleted: its code answers 410 for good and is never minted again. */
  | 'deleted';

export interface BackfillResult {
  postId: number;
  outcome: BackfillOutcome;
  code?: string;
  detail?: string;
}

/** The 202 answer to a batch (CONTRACT.md §1). */
export const backfillAcceptedSchema = z.object({
  workflowId: z.string(),
  accepted: z.number().int(),
  results: z.array(
    z.object({
      postId: z.number(),
      outcome: z.string(),
      code: z.string().optional(),
      detail: z.string().optional(),
    }),
  ),
});
