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
/**
 * Bytes of a CSV rule. The web process that receives it also serves redirects, and parsing, canonicalising and
 * checking a CSV holds its event loop: 64 MiB took over 5 s of long URLs, and minutes (and gigabytes) of tiny or
 * broken lines. At 1 MiB, parsed in slices (parseRetargetCsvInSlices), no slice holds it for more than a few
 * milliseconds; a larger change is several runs (docs/SECURITY.md, "Mass retargets").
 */
export const CSV_MAX_BYTES = 1024 * 1024;
/** Problems of a CSV rule listed before parsing stops. */
const CSV_PROBLEMS_LISTED = 20;

/** A lone UTF-16 surrogate: not text, and Postgres refuses it in the run's stored rule (jsonb). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const wellFormed = (v: string) => !LONE_SURROGATE.test(v);
const NOT_UNICODE = 'must be valid Unicode text';

const urlText = z
  .string()
  .min(1, 'must not be empty')
  .max(TARGET_URL_MAX_BYTES, 'must be at most 2,048 characters')
  .refine(wellFormed, NOT_UNICODE);

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
    .refine(wellFormed, NOT_UNICODE)
    .superRefine((pattern, ctx) => {
      const problem = regexProblem(pattern);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  /** `$1`, `$2`… name the pattern's groups. */
  replacement: z
    .string()
    .max(TARGET_URL_MAX_BYTES, 'must be at most 2,048 characters')
    .refine(wellFormed, NOT_UNICODE),
  /** `i`: case-insensitive. */
  flags: z.enum(['', 'i']).optional(),
});

export const csvRuleSchema = z.strictObject({
  type: z.literal('csv'),
  /** `old URL,new URL` per line (RFC 4180 quoting; an `old,new` header line is skipped). */
  csv: z
    .string()
    .min(1, 'must not be empty')
    .max(CSV_MAX_BYTES, 'is too large (1 MiB at most; split it into several runs)')
    .refine(wellFormed, NOT_UNICODE),
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
      // Whole runs between quotes at a time (indexOf), never a character at a time: a field may be a megabyte.
      let value = '';
      i++;
      for (;;) {
        const quote = line.indexOf('"', i);
        if (quote < 0) return null;
        value += line.slice(i, quote);
        if (line[quote + 1] === '"') {
          value += '"';
          i = quote + 2;
          continue;
        }
        i = quote + 1;
        break;
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

type CsvPair = { oldUrl: string; newUrl: string };
type CsvProblem = { line: number; message: string };

/** The lines of `csv` (LF or CRLF), one at a time, without splitting the whole text up front. */
function* csvLines(csv: string): Generator<string> {
  const text = csv.charCodeAt(0) === 0xfeff ? csv.slice(1) : csv;
  let at = 0;
  while (at <= text.length) {
    const lf = text.indexOf('\n', at);
    const end = lf < 0 ? text.length : lf;
    yield text.slice(at, end > at && text.charCodeAt(end - 1) === 13 ? end - 1 : end);
    at = end + 1;
  }
}

/** Parses lines into pairs; `take` lines per call, so a caller may hand the event loop back in between. */
function createCsvParser(csv: string) {
  const pairs: CsvPair[] = [];
  const problems: CsvProblem[] = [];
  const seen = new Map<string, number>();
  const lines = csvLines(csv);
  let line = 0;
  return {
    /** Reads up to `count` more lines; true when the file is done (or its verdict cannot change any more). */
    take(count: number): boolean {
      for (let n = 0; n < count; n++) {
        // Only the first problems are ever shown, and a file past the row cap is refused whole: reading on
        // would spend the web process's time (and memory) on a verdict that cannot change.
        if (problems.length >= CSV_PROBLEMS_LISTED || pairs.length > CSV_MAX_ROWS) return true;
        const next = lines.next();
        if (next.done) return true;
        line++;
        const raw = next.value;
        if (raw.trim() === '') continue;
        const fields = splitCsvLine(raw);
        if (fields?.length !== 2) {
          problems.push({ line, message: 'must be two fields: old URL,new URL' });
          continue;
        }
        const [oldUrl, newUrl] = fields as [string, string];
        if (pairs.length === 0 && problems.length === 0 && /^old/i.test(oldUrl) && /^new/i.test(newUrl))
          continue;
        if (!oldUrl || !newUrl) problems.push({ line, message: 'both URLs are required' });
        else if (seen.has(oldUrl))
          problems.push({ line, message: `repeats the old URL of line ${seen.get(oldUrl)}` });
        else {
          seen.set(oldUrl, line);
          pairs.push({ oldUrl, newUrl });
        }
      }
      return false;
    },
    result(): { pairs: CsvPair[]; problems: CsvProblem[] } {
      if (pairs.length > CSV_MAX_ROWS)
        problems.push({ line: 0, message: `has more than ${CSV_MAX_ROWS} rows` });
      if (pairs.length === 0 && problems.length === 0) problems.push({ line: 0, message: 'has no rows' });
      return { pairs, problems };
    },
  };
}

/**
 * Parses a CSV rule into pairs; every line's problem is reported with its line number (at most 20 listed), so
 * an admin fixes the file in one go. Checking the new URLs against the target rules is the caller's part.
 */
export function parseRetargetCsv(csv: string): { pairs: CsvPair[]; problems: CsvProblem[] } {
  const parser = createCsvParser(csv);
  parser.take(Number.POSITIVE_INFINITY);
  return parser.result();
}

/** Lines parsed (or pairs checked) between two hand-backs of the event loop: a few milliseconds' work. */
export const CSV_SLICE = 2_000;

/** Hands the event loop back (queued redirects are answered), then goes on. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * parseRetargetCsv for the web process, which also serves redirects: CSV_SLICE lines at a time, the event loop
 * handed back in between, so a large file never holds a redirect for longer than one slice.
 */
export async function parseRetargetCsvInSlices(
  csv: string,
): Promise<{ pairs: CsvPair[]; problems: CsvProblem[] }> {
  const parser = createCsvParser(csv);
  while (!parser.take(CSV_SLICE)) await yieldToEventLoop();
  return parser.result();
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
