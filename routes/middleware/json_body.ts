import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AppError, PayloadTooLargeError } from '../../lib/shared/errors.ts';
import { parseJsonText } from '../../lib/shared/validation.ts';

/** Limits the body to `maxBytes` (413 beyond) and refuses declared non-JSON bodies (415). */
export function jsonBody(maxBytes: number): MiddlewareHandler {
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new PayloadTooLargeError(`The request body is larger than ${maxBytes} bytes.`);
    },
  });
  return async (c, next) => {
    const type = c.req.header('Content-Type');
    if (type && !/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type)) {
      throw new AppError(415, 'unsupported-media-type', 'Unsupported media type', 'Send application/json.');
    }
    return limit(c, next);
  };
}

/**
 * The request body parsed as JSON (400 when malformed); use after jsonBody(). A NUL character is left to
 * `validate` (or the batch's per-item check), which names the field in a 422.
 */
export async function readJson(c: Context): Promise<unknown> {
  return parseJsonText(await c.req.text(), { refuseNul: false });
}
