import type { MiddlewareHandler } from 'hono';
import { nulCharacterError } from '../../lib/shared/validation.ts';

/**
 * Refuses a request whose path or query carries a NUL character (`%00`) with a 400 problem naming where: no
 * code, parameter or filter of the API or the UI takes one, and Postgres cannot compare text with one (it would
 * be a 500). Bodies are checked where they are parsed (parseJsonText, the UI's form guard).
 */
export function refuseNulInUrl(): MiddlewareHandler {
  return async (c, next) => {
    const url = c.req.url;
    const at = url.search(/%00/);
    if (at >= 0)
      throw nulCharacterError(url.indexOf('?') >= 0 && at > url.indexOf('?') ? '(query)' : '(path)');
    await next();
  };
}
