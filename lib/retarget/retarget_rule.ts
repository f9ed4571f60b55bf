// What a mass retarget may say: a prefix rewrite, a regular-expression rewrite, or a CSV of old → new URLs.
//
// Regular expressions come from admins and run over every link's target, so a pattern must never be able to
// take exponential time (catastrophic backtracking: `(a+)+$` against a long URL blocks a worker for minutes).
// They are compiled by re2js, a port of RE2: matching is linear in the input by construction (an automaton, no
// backtracking), and the constructs that need backtracking (backreferences, lookarounds) are refused at
// compile time with RE2's own message. A time budget over JavaScript's RegExp would instead stop a pathological
// pattern somewhere in the middle of a run, after part of the plan was made; a safe subset cannot fail that way.
// Sizes are bounded too: a pattern of at most 500 characters, replacements and URLs of at most 2,048 bytes.
import { RE2JS } from 're2js';
import { z } from 'zod';
import { TARGET_URL_MAX_BYTES } from '../links/link.ts';

export const REGEX_MAX_LENGTH = 500;
/** Rows of a CSV rule. */
export const CSV_MAX_ROWS = 200_000;

const urlText = z
  .string()
  .min(1, 'must not be empty')
  .max(TARGET_URL_MAX_BYTES, 'must be at most 2,048 characters');

export const prefixRuleSchema = z.strictObject({
  type: z.literal('prefix'),
  /** Targets starting with this … */
  from: urlText,
  /** … get this instead of it (the rest of the URL is kept). */
  to: urlText,
});

export const regexRuleSchema = z.strictObject({
  type: z.literal('regex'),
  /** RE2 syntax (no backreferences or lookarounds); the first match in a target is replaced. */
  pattern: z
    .string()
    .min(1, 'must not be empty')
    .max(REGEX_MAX_LENGTH, `must be at most ${REGEX_MAX_LENGTH} characters`)
    .superRefine((pattern, ctx) => {
      const problem = regexProblem(pattern);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  /** `$1`, `$2`… name the pattern's groups. */
  replacement: z.string().max(TARGET_URL_MAX_BYTES, 'must be at most 2,048 characters'),
  /** `i`: case-insensitive. */
  flags: z.enum(['', 'i']).optional(),
});

export const csvRuleSchema = z.strictObject({
  type: z.literal('csv'),
  /** `old URL,new URL` per line (RFC 4180 quoting; an `old,new` header line is skipped). */
  csv: z
    .string()
    .min(1, 'must not be empty')
    .max(64 * 1024 * 1024, 'is too large (64 MiB at most)'),
});

export const retargetRuleSchema = z.discriminatedUnion('type', [
  prefixRuleSchema,
  regexRuleSchema,
  csvRuleSchema,
]);
export type RetargetRule = z.infer<typeof retargetRuleSchema>;

export const retargetScopeSchema = z.strictObject({
  excludeWordPress: z.boolean().optional(),
  statuses: z
    .array(z.enum(['active', 'pending', 'gone', 'expired', 'blocked']))
    .max(5)
    .optional(),
});

/** POST /api/v1/retargets body. */
export const retargetRequestSchema = z.strictObject({
  rule: retargetRuleSchema,
  scope: retargetScopeSchema.optional(),
});
export type RetargetRequest = z.infer<typeof retargetRequestSchema>;

/** Why RE2 refuses `pattern`, or null when it compiles. */
export function regexProblem(pattern: string, flags = ''): string | null {
  try {
    RE2JS.compile(pattern, flags === 'i' ? RE2JS.CASE_INSENSITIVE : 0);
    return null;
  } catch (error) {
    return `is not a supported regular expression (RE2 syntax; no backreferences or lookarounds): ${(error as Error).message}`;
  }
}

/** A compiled prefix or regex rule: the new target for `url`, or null when the rule does not match it. */
export interface Rewriter {
  rewrite(url: string): string | null;
}

/** Compiles a prefix or regex rule (CSV rules are matched in SQL against their stored pairs). */
export function compileRule(rule: Exclude<RetargetRule, { type: 'csv' }>): Rewriter {
  if (rule.type === 'prefix') {
    return { rewrite: (url) => (url.startsWith(rule.from) ? rule.to + url.slice(rule.from.length) : null) };
  }
  const re = RE2JS.compile(rule.pattern, rule.flags === 'i' ? RE2JS.CASE_INSENSITIVE : 0);
  return {
    rewrite(url) {
      const matcher = re.matcher(url);
      if (!matcher.find()) return null;
      return re.matcher(url).replaceFirst(rule.replacement);
    },
  };
}

/** One CSV line's fields (RFC 4180: quoted fields may hold commas and doubled quotes). */
function splitCsvLine(line: string): string[] | null {
  const fields: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        if (i >= line.length) return null;
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            value += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += line[i++];
      }
      fields.push(value);
      if (i < line.length && line[i] !== ',') return null;
      i++;
    } else {
      const comma = line.indexOf(',', i);
      const end = comma < 0 ? line.length : comma;
      fields.push(line.slice(i, end).trim());
      i = end + 1;
    }
  }
  return fields;
}

/**
 * Parses a CSV rule into pairs; every line's problem is reported with its line number (at most 20 listed), so
 * an admin fixes the file in one go. Checking the new URLs against the target rules is the caller's part.
 */
export function parseRetargetCsv(csv: string): {
  pairs: { oldUrl: string; newUrl: string }[];
  problems: { line: number; message: string }[];
} {
  const pairs: { oldUrl: string; newUrl: string }[] = [];
  const problems: { line: number; message: string }[] = [];
  const seen = new Map<string, number>();
  const lines = csv.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    if (raw.trim() === '') continue;
    const fields = splitCsvLine(raw);
    if (fields?.length !== 2) {
      problems.push({ line, message: 'must be two fields: old URL,new URL' });
      continue;
    }
    const [oldUrl, newUrl] = fields as [string, string];
    if (pairs.length === 0 && problems.length === 0 && /^old/i.test(oldUrl) && /^new/i.test(newUrl)) continue;
    if (!oldUrl || !newUrl) problems.push({ line, message: 'both URLs are required' });
    else if (seen.has(oldUrl))
      problems.push({ line, message: `repeats the old URL of line ${seen.get(oldUrl)}` });
    else {
      seen.set(oldUrl, line);
      pairs.push({ oldUrl, newUrl });
    }
  }
  if (pairs.length > CSV_MAX_ROWS) problems.push({ line: 0, message: `has more than ${CSV_MAX_ROWS} rows` });
  if (pairs.length === 0 && problems.length === 0) problems.push({ line: 0, message: 'has no rows' });
  return { pairs, problems };
}

const isoTime = z.string().describe('ISO 8601 time');

/** A retarget run as the API returns it. */
export const retargetRunSchema = z.object({
  id: z.string(),
  kind: z.enum(['retarget', 'undo']),
  undoOf: z.string().optional(),
  rule: z.record(z.string(), z.unknown()),
  scope: z.record(z.string(), z.unknown()),
  status: z.enum(['planning', 'planned', 'running', 'paused', 'cancelled', 'finished', 'failed']),
  workflowId: z.string(),
  requestedBy: z.string(),
  approvedBy: z.string().optional(),
  report: z
    .record(z.string(), z.unknown())
    .describe('planned / invalid counts, the dry run sample, progress'),
  changes: z
    .record(z.string(), z.number())
    .optional()
    .describe('changes by state: planned, invalid, applied, skipped'),
  bitlyPending: z.number().optional().describe('applied changes Bitly has not followed yet'),
  workflow: z.object({ phase: z.string(), paused: z.boolean(), cancelled: z.boolean() }).optional(),
  createdAt: isoTime,
  approvedAt: isoTime.optional(),
  finishedAt: isoTime.optional(),
  updatedAt: isoTime,
});

export const retargetRunListSchema = z.object({ items: z.array(retargetRunSchema) });

export const retargetChangesSchema = z.object({
  items: z.array(
    z.object({
      code: z.string(),
      beforeUrl: z.string(),
      afterUrl: z.string(),
      state: z.enum(['planned', 'invalid', 'applied', 'skipped']),
      problem: z.string().nullable(),
    }),
  ),
  nextCursor: z.string().nullable(),
});

export const retargetActionSchema = z.object({ id: z.string(), workflowId: z.string(), action: z.string() });
