import { type ProblemArgs, type ProblemCode, problemCodeOf } from './field_problems.ts';

/**
 * A field-level validation message, as problem+json `errors[]` carries it: the English `message`, and the
 * problem's `code` (with `args`, the values in its text) when it is one of ours (lib/shared/field_problems.ts).
 */
export interface FieldError {
  path: string;
  message: string;
  code?: ProblemCode;
  args?: ProblemArgs;
}

/** `error` with the code of its message, when it has none yet and the message is one of ours. */
export function withProblemCode(error: FieldError): FieldError {
  if (error.code) return error;
  const found = problemCodeOf(error.message);
  if (!found) return error;
  return { ...error, code: found.code, ...(Object.keys(found.args).length > 0 ? { args: found.args } : {}) };
}

type Extra = { errors?: FieldError[]; headers?: Record<string, string>; [k: string]: unknown };

/**
 * Typed domain errors; routes/app.ts maps each to one RFC 9457 problem response, in one place.
 * `type` is a stable slug clients can switch on.
 */
export class AppError extends Error {
  readonly extra: Extra;
  constructor(
    readonly status: number,
    readonly type: string,
    readonly title: string,
    detail?: string,
    extra: Extra = {},
  ) {
    super(detail ?? title);
    this.name = new.target.name;
    // Every field error leaves with its code, wherever it was raised.
    this.extra = extra.errors ? { ...extra, errors: extra.errors.map(withProblemCode) } : extra;
  }
}

export class BadRequestError extends AppError {
  constructor(detail: string, errors?: FieldError[]) {
    super(400, 'bad-request', 'Bad request', detail, errors ? { errors } : {});
  }
}

export class ValidationError extends AppError {
  constructor(errors: FieldError[], detail = 'The request did not pass validation.') {
    super(422, 'validation', 'Validation failed', detail, { errors });
  }
}

export class UnauthorizedError extends AppError {
  constructor(detail = 'A valid credential is required.') {
    super(401, 'unauthorized', 'Unauthorized', detail, {
      headers: { 'WWW-Authenticate': 'Bearer realm="lifeline"' },
    });
  }
}

export class ForbiddenError extends AppError {
  constructor(detail = 'This credential lacks the required scope.') {
    super(403, 'forbidden', 'Forbidden', detail);
  }
}

export class NotFoundError extends AppError {
  constructor(detail = 'Not found.') {
    super(404, 'not-found', 'Not found', detail);
  }
}

/** A destination the safety scanner blocks (or, for a fallback URL, would serve without a warning page). */
export class TargetBlockedError extends AppError {
  constructor(errors: FieldError[]) {
    super(422, 'target-blocked', 'Target blocked', 'The destination is not allowed by the safety rules.', {
      errors,
    });
  }
}

export class ConflictError extends AppError {
  constructor(detail: string, errors?: FieldError[]) {
    super(409, 'conflict', 'Conflict', detail, errors ? { errors } : {});
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(detail = 'The request body is too large.') {
    super(413, 'payload-too-large', 'Payload too large', detail);
  }
}

export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super(429, 'rate-limited', 'Too many requests', `Retry in ${seconds} s.`, {
      headers: { 'Retry-After': String(seconds) },
      retryAfter: seconds,
    });
  }
}

export class UnavailableError extends AppError {
  constructor(detail: string, retryAfterSeconds = 5) {
    super(503, 'unavailable', 'Service unavailable', detail, {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
}

export class PreconditionFailedError extends AppError {
  constructor(detail: string) {
    super(412, 'precondition-failed', 'Precondition failed', detail);
  }
}

/**
 * Work that can never succeed as asked (bad input, a request to change a shared code): a workflow step fails
 * at once instead of retrying. `kind` names it for the workflow (its non-retryable error types).
 */
export class PermanentFailure extends Error {
  constructor(
    message: string,
    readonly kind = 'BadInput',
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Work that failed for now (a vendor's rate limit or outage, no free code this time): retried, after
 * `retryAfterMs` when the failure says how long to wait.
 */
export class TransientFailure extends Error {
  constructor(
    message: string,
    readonly kind: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
