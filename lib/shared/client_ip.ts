import type { Context } from 'hono';

/**
 * The client's IP address, runtime-neutral: the configured trusted header (set by our CDN or proxy; for a
 * list such as X-Forwarded-For, the last entry, which the nearest proxy appended) or else the socket
 * address that @hono/node-server (env.incoming) or Deno.serve (env.remoteAddr) hands the app.
 */
export function getClientIp(c: Context, trustedHeader: string | undefined): string {
  if (trustedHeader) {
    const value = c.req.header(trustedHeader);
    const last = value?.split(',').pop()?.trim();
    if (last) return last;
  }
  const env = c.env as
    | { incoming?: { socket?: { remoteAddress?: string } }; remoteAddr?: { hostname?: string } }
    | undefined;
  return env?.incoming?.socket?.remoteAddress ?? env?.remoteAddr?.hostname ?? 'unknown';
}
