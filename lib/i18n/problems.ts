import { type FieldError, withProblemCode } from '../shared/errors.ts';
import type { ProblemArgs } from '../shared/field_problems.ts';
import type { MessageKey } from './messages_en.ts';

// The lib and its zod schemas state problems in English, once, for the API (problem+json stays English), each
// with a stable code (lib/shared/field_problems.ts). Editors see them translated by that code: `problem.<code>`
// in the catalogues, the problem's values becoming arguments. A message without a code is shown in English,
// marked as such.

/** A problem as the UI gets it: a field error (with its code) or a bare English message. */
export type ProblemInput = string | Pick<FieldError, 'message' | 'code' | 'args'>;

/** zod's own English, for values a form cannot normally send (an unknown option, a wrong type). */
const ZOD_MESSAGE = /^(Invalid|Too small|Too big|Expected)\b/;

/** The catalogue key and arguments for a problem; `nested` arguments are problems themselves. Null: not ours. */
export function matchProblem(
  problem: ProblemInput,
): { key: MessageKey; args: ProblemArgs; nested: Record<string, string> } | null {
  const described =
    typeof problem === 'string'
      ? withProblemCode({ path: '', message: problem })
      : withProblemCode({ path: '', ...problem });
  if (!described.code)
    return ZOD_MESSAGE.test(described.message) ? { key: 'problem.invalid', args: {}, nested: {} } : null;
  const args: ProblemArgs = {};
  const nested: Record<string, string> = {};
  for (const [name, value] of Object.entries(described.args ?? {})) {
    if (name === 'problem') nested[name] = String(value);
    else args[name] = value;
  }
  return { key: `problem.${described.code}`, args, nested };
}
