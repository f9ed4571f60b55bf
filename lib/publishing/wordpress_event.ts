import { z } from 'zod';
import { isPossibleCode } from '../codes/code_rules.ts';
import { importedTitleSchema, postIdSchema, siteSchema, targetUrlSchema } from '../links/link.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { type CanonicalTargetPolicy, targetRuleProblem } from '../targets/target_rule.ts';

export const WORDPRESS_EVENTS = ['post.published', 'post.updated', 'post.unpublished'] as const;
export type WordPressEventName = (typeof WORDPRESS_EVENTS)[number];

/**
 * The plugin's installation (a UUID v4 it creates once): a new one for a known site means a fresh WordPress
 * (export, import, new post IDs), which switches the site into migration mode (ADR 0057).
 */
export const installationIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9-]{16,64}$/, 'must be 16 to 64 letters, digits or hyphens (a UUID)');

/** The code a post claims (its `_lifeline_code` post meta, carried by an export): a code by the code rule. */
export const knownCodeSchema = z
  .string()
  .max(64)
  .refine(isPossibleCode, { message: 'must be a short-link code (letters, digits, _ or -)' });

/** The WordPress GUID: an opaque string (usually, not always, a URL), kept as sent. */
export const guidSchema = z.string().min(1).max(2000);

/** Where one post of a batch or a listing carries a claim: a bad value is dropped, not the whole page. */
export const lenientKnownCode = knownCodeSchema.optional().catch(undefined);
export const lenientGuid = guidSchema.optional().catch(undefined);

/** The signed webhook body (API.md, "WordPress webhook"). */
export const wordpressEventSchema = z
  .object({
    id: z.string().min(1).max(200),
    event: z.enum(WORDPRESS_EVENTS),
    site: siteSchema,
    postId: postIdSchema,
    permalink: targetUrlSchema.optional(),
    title: importedTitleSchema.optional(),
    occurredAt: z.iso.datetime({ offset: true, message: fieldProblem('isoDate') }),
    /** Where the site's signed listing lives (CONTRACT.md §6): every event carries it since plugin 1.1. */
    restUrl: targetUrlSchema.optional(),
    installationId: installationIdSchema.optional(),
    knownCode: knownCodeSchema.optional(),
    guid: guidSchema.optional(),
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
export function getPermalinkProblem(event: WordPressEvent, policy: CanonicalTargetPolicy): string | null {
  if (event.permalink === undefined || event.event === 'post.unpublished') return null;
  return targetRuleProblem(event.permalink, policy);
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
  occurredAt: z.iso.datetime({ offset: true, message: fieldProblem('isoDate') }),
  restUrl: targetUrlSchema,
  reason: z.string().max(100),
  installationId: installationIdSchema.optional(),
});
export type SiteEvent = z.infer<typeof siteEventSchema>;
