import type { z } from 'zod';
import { BadRequestError, type FieldError, ValidationError } from './errors.ts';
import { fieldProblem, type ProblemArgs, type ProblemCode, problemCodeOf } from './field_problems.ts';

/**
 * The code of a zod issue: our own text's (fieldProblem), else one derived from zod's check (a length or number
 * bound, or "not a valid value" for a wrong type, format or option). A refinement's text that is not ours has none.
 */
function issueProblem(issue: z.core.$ZodIssue): { code: ProblemCode; args?: ProblemArgs } | null {
  const ours = problemCodeOf(issue.message);
  if (ours) return Object.keys(ours.args).length > 0 ? ours : { code: ours.code };
  if (issue.code === 'custom') return null;
  if (issue.code === 'too_big' && issue.origin === 'string')
    return { code: 'maxChars', args: { max: Number(issue.maximum) } };
  if (issue.code === 'too_small' && issue.origin === 'string')
    return Number(issue.minimum) <= 1
      ? { code: 'empty' }
      : { code: 'minChars', args: { min: Number(issue.minimum) } };
  if (issue.code === 'too_big' && issue.origin === 'number' && issue.inclusive)
    return { code: 'maxNumber', args: { max: Number(issue.maximum) } };
  if (issue.code === 'too_small' && issue.origin === 'number' && issue.inclusive)
    return { code: 'minNumber', args: { min: Number(issue.minimum) } };
  return { code: 'invalid' };
}

/** zod issues as problem+json `errors[]`: one entry per field (unknown keys each get their own), with codes. */
export function toFieldErrors(error: z.ZodError): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        out.push({
          path: base ? `${base}.${key}` : key,
          message: fieldProblem('unknownField'),
          code: 'unknownField',
        });
    } else {
      out.push({ path: base || '(body)', message: issue.message, ...issueProblem(issue) });
    }
  }
  return out;
}

/**
 * The path of the first string (or key) in `value` that holds a NUL character, or null. No field of Lifeline
 * takes one, and Postgres cannot store one in text: refused at the boundary rather than failing there (a 500).
 */
export function findNulCharacter(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path || '(body)' : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return at;
    const found = findNulCharacter(item, at);
    if (found !== null) return found;
  }
  return null;
}

/** What a field holding a NUL character is told. */
export const NUL_PROBLEM = fieldProblem('noNul');

/** The 400 for a value holding a NUL character at `path`. */
export function nulCharacterError(path: string): BadRequestError {
  return new BadRequestError('The request contains a NUL character, which no field accepts.', [
    { path, message: NUL_PROBLEM },
  ]);
}

/**
 * Parses JSON text strictly: malformed JSON is a 400 that says where; so is a NUL character in any string, unless
 * `refuseNul` is false — then `validate` refuses it after the schema (a 422 naming the field, or the schema's own
 * message for a field that has a rule about it).
 */
export function parseJsonText(text: string, options: { refuseNul?: boolean } = {}): unknown {
  if (text.trim() === '') throw new BadRequestError('The request body is empty; send a JSON document.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`The request body is not valid JSON: ${(error as Error).message}`);
  }
  if (options.refuseNul !== false) {
    const nul = findNulCharacter(value);
    if (nul !== null) throw nulCharacterError(nul);
  }
  return value;
}

/**
 * Validates with a schema; failures are a 422 listing each field and reason. A NUL character the schema let
 * through (no field takes one; Postgres cannot store one) is a 422 naming its field too.
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ValidationError(toFieldErrors(parsed.error));
  const nul = findNulCharacter(value);
  if (nul !== null) throw new ValidationError([{ path: nul, message: NUL_PROBLEM }]);
  return parsed.data;
}
