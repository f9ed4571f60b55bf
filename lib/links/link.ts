import { z } from 'zod';
import { aliasSchema } from '../codes/code_rules.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { domainNameOf, keyCode, type ShortDomains, shortUrlOfKey } from '../shared/link_key.ts';
import {
  LINK_ORIGINS,
  LINK_STATUSES,
  type LinkRow,
  SAFETY_VERDICTS,
  VENDOR_STATES,
  type VendorLinkRow,
} from '../stores/link_rows.ts';
import { CANONICAL_TARGET_MAX_BYTES, canonicalizeTarget } from '../targets/canonical_url.ts';
import { routingRuleOutputSchema, routingRulesSchema } from './routing_rules.ts';

/** A link as stored, for code above lib/ that shows or edits one (the row type lives with the stores). */
export type StoredLink = LinkRow;

// The link model: what a caller may send (zod schemas shared by the API, forms, webhooks and islands) and what
// the API returns. The stored row and its enumerations are defined with the stores (lib/stores/link_rows.ts).
export {
  LINK_ORIGINS,
  LINK_STATUSES,
  type LinkOrigin,
  type LinkStatus,
  SAFETY_VERDICTS,
  type SafetyVerdict,
  VENDOR_STATES,
  type VendorState,
} from '../stores/link_rows.ts';

/** Longest target URL in UTF-8 bytes (before and after canonicalisation). */
export const TARGET_URL_MAX_BYTES = CANONICAL_TARGET_MAX_BYTES;
export const REDIRECT_STATUSES = [301, 302, 307, 308] as const;

/**
 * A redirect target: any string in, the canonical URL out (lib/targets/canonical_url.ts: the form every URL parser
 * reads alike), or an issue naming why there is none. Every way a target enters parses with this schema, so each
 * layer behind it sees canonical strings only. Where a target may point (ALLOWED_TARGET_HOSTS, not the short
 * domain) is the deployment's policy, applied by lib/targets/target_rule.ts.
 */
/** Why a string has no canonical form as a redirect target (lib/targets/canonical_url.ts), or null when it has. */
export function targetUrlProblem(value: string): string | null {
  const canonical = canonicalizeTarget(value);
  return canonical.ok ? null : canonical.problem;
}

export const targetUrlSchema = z.string().transform((value, ctx) => {
  const canonical = canonicalizeTarget(value);
  if (canonical.ok) return canonical.url;
  ctx.addIssue({ code: 'custom', message: canonical.problem, input: value });
  return z.NEVER;
});

const isoDateTime = z.iso.datetime({ offset: true, message: fieldProblem('isoDate') });

export const tagSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .regex(/^[^\s,]+$/, fieldProblem('noSpacesOrCommas'));

export const siteSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9._-]+$/, fieldProblem('siteChars'));

export const postIdSchema = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** Longest title, in characters (Unicode code points, so an Arabic or emoji title is not cut short). */
export const TITLE_MAX_CHARS = 500;

/**
 * Why a (trimmed) string is not an acceptable title, or null. A title is one line of text: no control
 * characters or line separators, and no bidirectional embeddings, overrides or isolates (U+202A–U+202E,
 * U+2066–U+2069), which could make it display as something else; pages isolate titles themselves. The marks
 * RTL text legitimately uses (U+200E, U+200F, U+061C) and joiners are allowed.
 */
export function titleProblem(value: string): string | null {
  if (value === '') return fieldProblem('empty');
  if ([...value].length > TITLE_MAX_CHARS) return fieldProblem('maxChars', { max: TITLE_MAX_CHARS });
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(value)) return fieldProblem('oneLine');
  if (/[\u202a-\u202e\u2066-\u2069]/.test(value)) return fieldProblem('noBidiControls');
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value))
    return fieldProblem('validUnicode');
  return null;
}

/**
 * A title written elsewhere (a WordPress post's), made to pass titleProblem instead of refused: the post's link
 * matters more than its headline, and the editor rules are for what editors type. Line breaks and other control
 * characters become spaces, bidirectional formatting characters go, a broken surrogate becomes U+FFFD, spaces
 * fold, and it is cut to TITLE_MAX_CHARS code points (the last one an ellipsis). Undefined when nothing is left.
 */
export function toTitle(value: string): string | undefined {
  const cleaned = value
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ')
    .replace(/[\u202a-\u202e\u2066-\u2069]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .normalize('NFC');
  const chars = [...cleaned];
  const title =
    chars.length > TITLE_MAX_CHARS
      ? `${chars
          .slice(0, TITLE_MAX_CHARS - 1)
          .join('')
          .trimEnd()}\u2026`
      : cleaned;
  return title === '' ? undefined : title;
}

/** A title from WordPress (webhooks, backfill batches, the signed listing): toTitle's, never refused. */
export const importedTitleSchema = z.string().transform(toTitle);

/** A link's title: trimmed, stored in Unicode normalisation form C. */
export const titleSchema = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    const problem = titleProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .normalize('NFC')
  .describe(`A headline for people, 1–${TITLE_MAX_CHARS} characters on one line`);

/** Longest per-link UTM value: GA4 keeps at most 100 characters of a parameter value. */
export const UTM_VALUE_MAX_LENGTH = 100;

/** One per-link UTM value (any script: it is percent-encoded into the Location). */
export const utmValueSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(UTM_VALUE_MAX_LENGTH, `must be at most ${UTM_VALUE_MAX_LENGTH} characters`)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  .regex(/^[^\u0000-\u001f\u007f-\u009f\u2028\u2029]*$/, fieldProblem('noControls'));

/**
 * A link's own UTM parameters, appended to its Location as utm_campaign, utm_source and utm_medium. They win
 * over the deployment's UTM_PARAMS for the same key; a key the target URL already carries is never replaced.
 */
export const utmSchema = z.strictObject({
  campaign: utmValueSchema.optional(),
  source: utmValueSchema.optional(),
  medium: utmValueSchema.optional(),
});
export type LinkUtm = z.infer<typeof utmSchema>;

/** PATCH's `utm`: a merge patch (a value sets, null clears, an absent key is left alone; `utm: null` clears all). */
export const utmPatchSchema = z
  .strictObject({
    campaign: utmValueSchema.nullable().optional(),
    source: utmValueSchema.nullable().optional(),
    medium: utmValueSchema.nullable().optional(),
  })
  .nullable();

/**
 * The short domain a link is made on: one of SHORT_DOMAINS (which one is checked against the configuration where
 * the link is created, lib/links/create_link.ts); absent: the default, the first.
 */
export const shortDomainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(253)
  .describe('one of the deployment’s short domains (SHORT_DOMAINS); absent: the default, the first');

/** Every field a caller may set on a link, unrefined (so variants can .pick/.partial/.extend it). */
export const linkFieldsSchema = z.strictObject({
  url: targetUrlSchema,
  alias: aliasSchema.optional(),
  expiresAt: isoDateTime.optional(),
  expiredUrl: targetUrlSchema.optional(),
  redirectStatus: z.union(REDIRECT_STATUSES.map((s) => z.literal(s))).optional(),
  tags: z
    .array(tagSchema)
    .max(50, fieldProblem('maxTags', { max: 50 }))
    .optional(),
  site: siteSchema.optional(),
  postId: postIdSchema.optional(),
  title: titleSchema.optional(),
  utm: utmSchema.optional(),
  domain: shortDomainSchema.optional(),
});

/**
 * A batch item (POST /api/v1/links/batch): a link without routing rules, which are set one link at a time
 * (POST /api/v1/links, PATCH) where each rule target's problems can be named.
 */
export const batchLinkInputSchema = linkFieldsSchema.refine(
  (v) => (v.site === undefined) === (v.postId === undefined),
  { message: fieldProblem('sitePostTogether'), path: ['postId'] },
);

/** POST /api/v1/links body. Unknown fields are rejected so typos never pass silently. */
export const createLinkInputSchema = linkFieldsSchema
  .extend({ rules: routingRulesSchema.optional() })
  .refine((v) => (v.site === undefined) === (v.postId === undefined), {
    message: fieldProblem('sitePostTogether'),
    path: ['postId'],
  });
export type CreateLinkInput = z.infer<typeof createLinkInputSchema>;

/** Statuses an editor or integrator may set; expired and blocked are set by workflows only. */
export const EDITABLE_STATUSES = ['active', 'gone'] as const;

/**
 * PATCH /api/v1/links/{code} body: every field optional; `null` clears an optional setting (title, expiry,
 * fallback, per-link redirect status). `reason` goes to the audit log.
 */
export const updateLinkInputSchema = linkFieldsSchema
  .pick({ url: true, tags: true })
  .partial()
  .extend({
    title: titleSchema.nullable().optional(),
    expiresAt: isoDateTime.nullable().optional(),
    expiredUrl: targetUrlSchema.nullable().optional(),
    redirectStatus: linkFieldsSchema.shape.redirectStatus.unwrap().nullable().optional(),
    status: z.enum(EDITABLE_STATUSES).optional(),
    utm: utmPatchSchema.optional(),
    /** The whole list, replacing the stored one (like `tags`); `null` or `[]` removes every rule. */
    rules: routingRulesSchema.nullable().optional(),
    reason: z.string().trim().max(500, 'must be at most 500 characters').optional(),
  })
  .refine((v) => Object.keys(v).some((k) => k !== 'reason'), {
    message: fieldProblem('nothingToChange'),
    path: ['(body)'],
  });
export type UpdateLinkInput = z.infer<typeof updateLinkInputSchema>;

/** A link as the API returns it (API.md). */
export const linkSchema = z.object({
  code: z.string().describe('the code on its short domain; with `domain`, what names the link'),
  domain: z.string().describe('its short domain (SHORT_DOMAINS); the default unless made on another'),
  shortUrl: z.string(),
  url: z.string(),
  status: z.enum(LINK_STATUSES),
  safety: z.enum(SAFETY_VERDICTS),
  /** Why the verdict is what it is (scanner findings, reader reports), and when it was last checked. */
  safetyReason: z.string().optional(),
  safetyCheckedAt: z.string().optional(),
  origin: z.enum(LINK_ORIGINS),
  site: z.string().optional(),
  postId: z.number().optional(),
  title: z.string().optional(),
  tags: z.array(z.string()),
  expiresAt: z.string().optional(),
  expiredUrl: z.string().optional(),
  redirectStatus: z.number().optional(),
  utm: z
    .object({ campaign: z.string().optional(), source: z.string().optional(), medium: z.string().optional() })
    .optional()
    .describe('the link’s own UTM values (absent: none); they win over the deployment’s UTM_PARAMS'),
  rules: z
    .array(routingRuleOutputSchema)
    .optional()
    .describe('ordered routing rules, first match wins (absent: none); everyone else goes to `url`'),
  createdAt: z.string(),
  updatedAt: z.string(),
  vendors: z.array(
    z.object({
      name: z.string(),
      state: z.enum(VENDOR_STATES),
      syncedAt: z.string().optional(),
      error: z.string().optional(),
    }),
  ),
});
export type Link = z.infer<typeof linkSchema>;

/** Projects a stored row (and its vendor replicas) to the API shape. */
export function toLink(row: LinkRow, domains: ShortDomains, vendors: VendorLinkRow[] = []): Link {
  const utm = toLinkUtm(row);
  return {
    code: keyCode(row.code),
    domain: domainNameOf(domains, row.domain),
    shortUrl: shortUrlOfKey(domains, row.code),
    url: row.targetUrl,
    status: row.status,
    safety: row.safety,
    ...(row.safetyReason ? { safetyReason: row.safetyReason } : {}),
    ...(row.safetyCheckedAt ? { safetyCheckedAt: row.safetyCheckedAt.toISOString() } : {}),
    origin: row.origin,
    ...(row.site !== null ? { site: row.site } : {}),
    ...(row.postId !== null ? { postId: row.postId } : {}),
    ...(row.title !== null ? { title: row.title } : {}),
    tags: row.tags,
    ...(row.expiresAt ? { expiresAt: row.expiresAt.toISOString() } : {}),
    ...(row.expiredUrl ? { expiredUrl: row.expiredUrl } : {}),
    ...(row.redirectStatus ? { redirectStatus: row.redirectStatus } : {}),
    ...(utm ? { utm } : {}),
    ...(row.routingRules && row.routingRules.length > 0 ? { rules: row.routingRules } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    vendors: vendors.map((v) => ({
      name: v.vendor,
      state: v.state,
      ...(v.syncedAt ? { syncedAt: v.syncedAt.toISOString() } : {}),
      ...(v.lastError ? { error: v.lastError } : {}),
    })),
  };
}

/**
 * toLink for the editor UI's pages, whose routes name a link by its key (`/ui/links/{key}`): `code` is the key
 * (lib/shared/link_key.ts), so every form and download on the page names the right link on any short domain.
 */
export function toUiLink(row: LinkRow, domains: ShortDomains, vendors: VendorLinkRow[] = []): Link {
  return { ...toLink(row, domains, vendors), code: row.code };
}

/** The link's own UTM values as the API shows them, or undefined when it has none. */
export function toLinkUtm(
  row: Pick<LinkRow, 'utmCampaign' | 'utmSource' | 'utmMedium'>,
): LinkUtm | undefined {
  if (!row.utmCampaign && !row.utmSource && !row.utmMedium) return undefined;
  return {
    ...(row.utmCampaign ? { campaign: row.utmCampaign } : {}),
    ...(row.utmSource ? { source: row.utmSource } : {}),
    ...(row.utmMedium ? { medium: row.utmMedium } : {}),
  };
}
