import { AppError, type FieldError } from './errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The RFC 9457 body of a problem. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  /** Each with the problem's `code` (and `args`) when it is one of ours (lib/shared/field_problems.ts). */
  errors?: FieldError[];
  [extension: string]: unknown;
}

/** Maps any thrown value to a problem; unknown errors become a 500 that reveals nothing internal. */
export function toProblem(
  error: unknown,
  instance?: string,
): { body: ProblemBody; headers: Record<string, string> } {
  if (error instanceof AppError) {
    const { headers, ...extensions } = error.extra;
    return {
      body: {
        type: `urn:lifeline:problem:${error.type}`,
        title: error.title,
        status: error.status,
        detail: error.message,
        ...(instance ? { instance } : {}),
        ...extensions,
      },
      headers: headers ?? {},
    };
  }
  return {
    body: {
      type: 'urn:lifeline:problem:internal',
      title: 'Internal error',
      status: 500,
      detail: 'Something went wrong on our side; it has been logged.',
      ...(instance ? { instance } : {}),
    },
    headers: {},
  };
}

/** A problem+json Response. */
export function problemResponse(error: unknown, instance?: string): Response {
  const { body, headers } = toProblem(error, instance);
  return new Response(JSON.stringify(body), {
    status: body.status,
    headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Cache-Control': 'no-store', ...headers },
  });
}
