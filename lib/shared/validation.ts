import type { z } from 'zod';
import { BadRequestError, type FieldError, ValidationError } from './errors.ts';

/** zod issues as problem+json `errors[]`: one entry per field (unknown keys each get their own). */
export function toFieldErrors(error: z.ZodError): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        out.push({ path: base ? `${base}.${key}` : key, message: 'is not a known field' });
    } else {
      out.push({ path: base || '(body)', message: issue.message });
    }
  }
  return out;
}

/** Parses JSON text strictly: malformed JSON is a 400 that says where. */
export function parseJsonText(text: string): unknown {
  if (text.trim() === '') throw new BadRequestError('The request body is empty; send a JSON document.');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`The request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Validates with a schema; failures are a 422 listing each field and reason. */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ValidationError(toFieldErrors(parsed.error));
  return parsed.data;
}
