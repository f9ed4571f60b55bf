// What a mass retarget may say: a prefix rewrite, a regular-expression rewrite, or a CSV of old → new URLs.
//
// Regular expressions come from admins and run over every link's target, so a pattern must never be able to
// take exponential time (catastrophic backtracking: `(a+)+$` against a long URL blocks a worker for minutes).
// They are compiled by re2js, a port of RE2: matching is linear in the input by construction (an automaton, no
// backtracking), and the constructs that need backtracking (backreferences, lookarounds) are refused at
// compile time with RE2's own message. A time budget over JavaScript's RegExp would instead stop a pathological
// pattern somewhere in the middle of a run, after part of the plan was made; a safe subset cannot fail that way.
// Sizes are bounded too: a pattern of at most 500 characters, replacements and URLs of at most 2,048 bytes.
import { finished } from 'node:stream/promises';
import { CsvError, type InfoRecord, type Options, Parser } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { RE2JS } from 're2js';
import { z } from 'zod';
import { TARGET_URL_MAX_BYTES } from '../links/link.ts';
import { fieldProblem } from '../shared/field_problems.ts';

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
const NOT_UNICODE = fieldProblem('validUnicode');

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
  /** `old URL,new URL` per row (RFC 4180 quoting, line breaks too; an `old,new` header row is skipped). */
  csv: z
    .string()
    .min(1, 'must not be empty')
    .max(CSV_MAX_BYTES, fieldProblem('csvTooLarge'))
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

type CsvPair = { oldUrl: string; newUrl: string };
type CsvProblem = { line: number; message: string };

/**
 * RFC 4180 as csv-parse reads it: quoted fields may hold commas, doubled quotes and line breaks; records end at
 * LF or CRLF; unquoted fields and the space around quotes are trimmed; blank lines are skipped. Records of any
 * length come through (relax_column_count), so a row with the wrong number of fields is named, not fatal. No
 * record size cap: a rule is at most CSV_MAX_BYTES, and one URL may be most of it.
 */
const CSV_OPTIONS = {
  bom: true,
  record_delimiter: ['\r\n', '\n'],
  trim: true,
  skip_empty_lines: true,
  relax_column_count: true,
  max_record_size: 0,
} satisfies Options;

/** Thrown from a record callback to stop parsing once the verdict cannot change. */
const ENOUGH = new Error('enough of the CSV was read');

/** What a malformed quote is called; csv-parse cannot tell where the next row starts after one, so it is the last. */
function quoteProblem(error: CsvError): string {
  return fieldProblem(error.code === 'CSV_QUOTE_NOT_CLOSED' ? 'csvQuoteNotClosed' : 'csvQuoteOutOfPlace');
}

/**
 * Turns csv-parse's records into pairs and problems, each problem named by the line its row starts on (a
 * quoted line break makes a row span lines). `bytes` is the whole input, for counting lines.
 */
function createPairCollector(bytes: Buffer) {
  const pairs: CsvPair[] = [];
  const problems: CsvProblem[] = [];
  const seen = new Map<string, number>();
  // Where the previous row ended (a byte offset) and the line that offset is on.
  let rowEnd = 0;
  let rowEndLine = 1;
  /** The line (from 1) the next row starts on: the first non-blank line after the previous row. */
  const nextRowLine = () => {
    const first = bytes[rowEnd];
    // Most rows start right where the last one ended, with no blank line between: nothing to skip.
    if (first !== undefined && first > 0x20 && first < 0x80) return rowEndLine;
    let at = rowEnd;
    while (at < bytes.length) {
      const lf = bytes.indexOf(0x0a, at);
      const end = lf < 0 ? bytes.length : lf;
      if (bytes.toString('utf8', at, end).trim() !== '') break;
      at = end + 1;
      rowEndLine++;
    }
    rowEnd = at;
    return rowEndLine;
  };
  /** Moves past a row that started on `line`: its quoted line breaks, and the one that ends it. */
  const passRow = (line: number, fields: string[], end: number) => {
    let breaks = bytes[end - 1] === 0x0a ? 1 : 0;
    for (const field of fields)
      for (let lf = field.indexOf('\n'); lf >= 0; lf = field.indexOf('\n', lf + 1)) breaks++;
    rowEnd = end;
    rowEndLine = line + breaks;
  };
  const add = (line: number, message: string) => {
    problems.push({ line, message });
    // Only the first problems are ever shown: reading on would spend the web process's time on nothing.
    if (problems.length >= CSV_PROBLEMS_LISTED) throw ENOUGH;
  };
  return {
    options: {
      ...CSV_OPTIONS,
      on_record(fields: string[], info: InfoRecord): null {
        const line = nextRowLine();
        passRow(line, fields, info.bytes);
        if (fields.length !== 2) {
          add(line, fieldProblem('csvTwoFields'));
          return null;
        }
        const [oldUrl, newUrl] = fields as [string, string];
        if (pairs.length === 0 && problems.length === 0 && /^old/i.test(oldUrl) && /^new/i.test(newUrl))
          return null;
        if (!oldUrl || !newUrl) add(line, fieldProblem('csvBothUrls'));
        else if (seen.has(oldUrl)) add(line, fieldProblem('csvRepeats', { line: seen.get(oldUrl)! }));
        else {
          seen.set(oldUrl, line);
          pairs.push({ oldUrl, newUrl });
          // A file past the row cap is refused whole: the rest cannot change that.
          if (pairs.length > CSV_MAX_ROWS) throw ENOUGH;
        }
        return null;
      },
    },
    /** Where parsing stopped, if it stopped early: a malformed quote is a problem, anything else a bug. */
    stopped(error: unknown) {
      if (error === ENOUGH) return;
      if (!(error instanceof CsvError)) throw error;
      problems.push({ line: nextRowLine(), message: quoteProblem(error) });
    },
    result(): { pairs: CsvPair[]; problems: CsvProblem[] } {
      if (pairs.length > CSV_MAX_ROWS)
        problems.push({ line: 0, message: fieldProblem('csvTooManyRows', { max: CSV_MAX_ROWS }) });
      if (pairs.length === 0 && problems.length === 0)
        problems.push({ line: 0, message: fieldProblem('csvNoRows') });
      return { pairs, problems };
    },
  };
}

/**
 * Parses a CSV rule into pairs; every row's problem is reported with its line number (at most 20 listed), so
 * an admin fixes the file in one go. Checking the new URLs against the target rules is the caller's part.
 */
export function parseRetargetCsv(csv: string): { pairs: CsvPair[]; problems: CsvProblem[] } {
  const bytes = Buffer.from(csv);
  const collector = createPairCollector(bytes);
  try {
    parseSync(bytes, collector.options);
  } catch (error) {
    collector.stopped(error);
  }
  return collector.result();
}

/** Pairs checked between two hand-backs of the event loop: a few milliseconds' work. */
export const CSV_SLICE = 2_000;
/** Bytes parsed between two hand-backs of the event loop: a few milliseconds' work at worst (tiny rows). */
export const CSV_SLICE_BYTES = 8 * 1024;

/** Hands the event loop back (queued redirects are answered), then goes on. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * parseRetargetCsv for the web process, which also serves redirects: csv-parse's stream takes CSV_SLICE_BYTES
 * at a time (it parses each write before returning), the event loop handed back in between, so a large file
 * never holds a redirect for longer than one slice.
 */
export async function parseRetargetCsvInSlices(
  csv: string,
): Promise<{ pairs: CsvPair[]; problems: CsvProblem[] }> {
  const bytes = Buffer.from(csv);
  const collector = createPairCollector(bytes);
  const parser = new Parser(collector.options);
  // Records never reach the readable side (the callback keeps them); flowing, so the stream can end.
  parser.resume();
  const done = finished(parser);
  for (let at = 0; at < bytes.length && !parser.destroyed; at += CSV_SLICE_BYTES) {
    if (at > 0) await yieldToEventLoop();
    if (!parser.destroyed) parser.write(bytes.subarray(at, at + CSV_SLICE_BYTES));
  }
  if (!parser.destroyed) parser.end();
  try {
    await done;
  } catch (error) {
    collector.stopped(error);
  }
  return collector.result();
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
