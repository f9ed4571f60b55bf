import type { MiddlewareHandler } from 'hono';
import { sha256Hex, timingSafeEqualString } from '../../lib/shared/crypto.ts';
import { NotFoundError, UnauthorizedError } from '../../lib/shared/errors.ts';

/**
 * GET /metrics only with `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time, as hashes of equal
 * length). Without METRICS_TOKEN the endpoint is off: a 404, like any path that serves nothing. Which host may
 * serve it at all is lib/redirect/host_routing.ts's call (never a separate short host).
 */
export function requireMetricsToken(token: string | undefined): MiddlewareHandler {
  const expected = token === undefined ? undefined : sha256Hex(`metrics:${token}`);
  return async (c, next) => {
    if (expected === undefined)
      throw new NotFoundError('Nothing at /metrics (set METRICS_TOKEN to serve it).');
    const m = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('Authorization') ?? '');
    const given = m ? await sha256Hex(`metrics:${m[1]}`) : '';
    if (!timingSafeEqualString(given, await expected)) {
      throw new UnauthorizedError('Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>".');
    }
    await next();
  };
}
