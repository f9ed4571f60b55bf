import type { Context } from 'hono';
import ipaddr from 'ipaddr.js';

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

/**
 * The network a client address stands for when counting readers and attempts: an IPv4 address itself (an
 * IPv4-mapped IPv6 address as its IPv4 address), an IPv6 address as its /64 (`2001:db8:1:2::/64`), since one
 * subscriber is routinely handed a whole /64 and could otherwise count as billions of clients. Anything that is
 * not an address (a misconfigured proxy header) is kept as written, cut to 64 characters.
 */
export function getClientNetwork(ip: string): string {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (!ipaddr.isValid(bare)) return bare.slice(0, 64);
  const address = ipaddr.process(bare);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}
