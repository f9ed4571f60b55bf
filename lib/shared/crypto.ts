/** Runtime-neutral crypto helpers (Web Crypto), shared by Node and Deno. */

const encoder = new TextEncoder();

/** Lower-case hex of some bytes. */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = '';
  for (const b of view) out += b.toString(16).padStart(2, '0');
  return out;
}

/** SHA-256 of a UTF-8 string, as hex. */
export async function sha256Hex(value: string): Promise<string> {
  return toHex(await crypto.subtle.digest('SHA-256', encoder.encode(value)));
}

/** HMAC-SHA256(secret, message) as hex. */
export async function hmacSha256Hex(secret: string, message: string | Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const data = typeof message === 'string' ? encoder.encode(message) : message;
  return toHex(await crypto.subtle.sign('HMAC', key, data as Uint8Array<ArrayBuffer>));
}

/** Compares two strings in time independent of where they differ (lengths may leak; ours are fixed). */
export function timingSafeEqualString(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  let diff = x.length ^ y.length;
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A random token of `length` base62 characters from the CSPRNG (rejection sampling, no bias). */
export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}
