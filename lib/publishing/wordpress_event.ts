import { z } from 'zod';
import { importedTitleSchema, postIdSchema, siteSchema, targetUrlSchema } from '../links/link.ts';
import { type TargetPolicy, targetPolicyProblem } from '../links/target_policy.ts';

export const WORDPRESS_EVENTS = ['post.published', 'post.updated', 'post.unpublished'] as const;
export type WordPressEventName = (typeof WORDPRESS_EVENTS)[number];

/** The signed webhook body (API.md, "WordPress webhook"). */
export const wordpressEventSchema = z
  .object({
    id: z.string().min(1).max(200),
    event: z.enum(WORDPRESS_EVENTS),
    site: siteSchema,
    postId: postIdSchema,
    permalink: targetUrlSchema.optional(),
    title: importedTitleSchema.optional(),
    occurredAt: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with a zone' }),
    /** Where the site's signed listing lives (CONTRACT.md §6): every event carries it since plugin 1.1. */
    restUrl: targetUrlSchema.optional(),
  })
  .refine((e) => e.event === 'post.unpublished' || e.permalink !== undefined, {
    message: 'is required for this event',
    path: ['permalink'],
  });
export type WordPressEvent = z.infer<typeof wordpressEventSchema>;

/**
 * Why a verified event's permalink may not become a link's target (ALLOWED_TARGET_HOSTS, the short domain), or
 * null. The schema has already made it canonical. An unpublish never retargets anything: its permalink is not
 * checked (intake drops it when it would be refused).
 */
export function getPermalinkProblem(event: WordPressEvent, policy: TargetPolicy): string | null {
  if (event.permalink === undefined || event.event === 'post.unpublished') return null;
  return targetPolicyProblem(event.permalink, policy);
}

/** Why WordPress sent `site.permalinks_changed`: the option that changed (CONTRACT.md §6). */
export const SITE_EVENT_REASONS = [
  'permalink_structure',
  'category_base',
  'tag_base',
  'home',
  'siteurl',
] as const;

/** `site.permalinks_changed`: every permalink of the site may have moved, and no post was saved. */
export const siteEventSchema = z.object({
  id: z.string().min(1).max(200),
  event: z.literal('site.permalinks_changed'),
  site: siteSchema,
  occurredAt: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with a zone' }),
  restUrl: targetUrlSchema,
  reason: z.string().max(100),
});
export type SiteEvent = z.infer<typeof siteEventSchema>;
