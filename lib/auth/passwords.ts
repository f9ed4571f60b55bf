import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// OWASP's Password Storage Cheat Sheet asks scrypt for at least N=2^17, r=8, p=1 (128 MiB and ~0.3-0.6 s per
// hash on a shared 2-core machine). Parameters are stored with each hash, so older hashes still verify and are
// replaced on the next successful login (needsRehash). Each derivation holds 128 MiB: at most
// HASHES_AT_ONCE run at once per process, the rest wait their turn, so a burst of logins cannot run the
// process out of memory (the login limits bound how many arrive).
const N = 2 ** 17;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
/** Derivations running at once per process, at most. */
const HASHES_AT_ONCE = 2;
/** Stored parameters outside these bounds are refused rather than derived (a forged hash could ask for GiBs). */
const N_MIN = 2 ** 14;
const N_MAX = 2 ** 20;

/** The scrypt parameters new hashes use (OWASP's minimum). */
export const PASSWORD_HASH_PARAMETERS = { N, r: R, p: P } as const;

let running = 0;
const waiting: (() => void)[] = [];

async function withSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= HASHES_AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return withSlot(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(
          password.normalize('NFKC'),
          salt,
          KEY_LENGTH,
          { N: n, r, p, maxmem: 256 * n * r },
          (err, key) => (err ? reject(err) : resolve(key)),
        );
      }),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64url parts). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

function parseHash(stored: string): { n: number; r: number; p: number; salt: Buffer; hash: Buffer } | null {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return null;
  const params = { n: Number(n), r: Number(r), p: Number(p) };
  if (
    !Number.isInteger(params.n) ||
    params.n < N_MIN ||
    params.n > N_MAX ||
    (params.n & (params.n - 1)) !== 0
  )
    return null;
  if (!Number.isInteger(params.r) || params.r < 1 || params.r > 32) return null;
  if (!Number.isInteger(params.p) || params.p < 1 || params.p > 16) return null;
  return { ...params, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') };
}

/** True when `password` matches `stored`; constant-time on the derived key. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const actual = await derive(password, parsed.salt, parsed.n, parsed.r, parsed.p);
  return actual.length === parsed.hash.length && timingSafeEqual(actual, parsed.hash);
}

/** True when `stored` was made with weaker parameters than new hashes get: rehash it at the next login. */
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  return parsed === null || parsed.n < N || parsed.r < R || parsed.p < P;
}
