import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { createHashSlots, type HashAdmission, type HashSlotStats } from './hash_slots.ts';

// OWASP's Password Storage Cheat Sheet asks scrypt for at least N=2^17, r=8, p=1 (128 MiB and ~0.3-0.6 s per
// hash on a shared 2-core machine). Parameters are stored with each hash, so older hashes still verify and are
// replaced on the next successful login (needsRehash). Each derivation holds 128 MiB: at most
// HASHES_AT_ONCE run at once per process, the rest wait their turn (lib/auth/hash_slots.ts), so a burst of
// logins cannot run the process out of memory; sign-ins wait in a bounded queue, one per network, and are
// answered 503 beyond it.
const N = 2 ** 17;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
/** Derivations running at once per process, at most. */
export const HASHES_AT_ONCE = 2;
/** How long a sign-in waits for a derivation slot before it is answered 503 (a stuck queue never hangs it). */
export const HASH_WAIT_MAX_MS = 10_000;
/** Stored parameters outside these bounds are refused rather than derived (a forged hash could ask for GiBs). */
const N_MIN = 2 ** 14;
const N_MAX = 2 ** 20;
/**
 * Longest password, in UTF-8 bytes of what was typed (before normalisation): bytes rather than characters
 * because bytes are what a request carries and a queued attempt holds (1,024 characters could be 4 KiB), and
 * NFKC can multiply a string's length (one character becomes up to 18). Every password Lifeline sets fits
 * (the forms take 200 characters, generated ones are 27); a sign-in with a longer one is refused before the
 * rate limiter and the hash.
 */
export const PASSWORD_MAX_BYTES = 1024;

/** The scrypt parameters new hashes use (OWASP's minimum). */
export const PASSWORD_HASH_PARAMETERS = { N, r: R, p: P } as const;

const slots = createHashSlots({ slots: HASHES_AT_ONCE, maxWaitMs: HASH_WAIT_MAX_MS });

/** Whether `password` is longer than any password can be (PASSWORD_MAX_BYTES). */
export function isPasswordTooLong(password: string): boolean {
  // Cheap bounds first: a UTF-16 unit is 1 to 3 UTF-8 bytes.
  if (password.length > PASSWORD_MAX_BYTES) return true;
  if (password.length * 3 <= PASSWORD_MAX_BYTES) return false;
  return Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES;
}

/** The derivation slots and the sign-in queue of this process, for /metrics. */
export function getPasswordHashStats(): HashSlotStats {
  return slots.stats();
}

function derive(
  password: string,
  salt: Buffer,
  n: number,
  r: number,
  p: number,
  admission?: HashAdmission,
): Promise<Buffer> {
  return slots.run(
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
    admission,
  );
}

/** `scrypt$N$r$p$salt$hash` (base64url parts). */
export async function hashPassword(password: string): Promise<string> {
  if (isPasswordTooLong(password)) throw new RangeError(`a password is at most ${PASSWORD_MAX_BYTES} bytes`);
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

/**
 * True when `password` matches `stored`; constant-time on the derived key. A sign-in passes its `admission`
 * (its network, the queue bound, its request's signal): it may then be refused with HashBusyError rather
 * than wait behind a full queue.
 */
export async function verifyPassword(
  password: string,
  stored: string,
  admission?: HashAdmission,
): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed || isPasswordTooLong(password)) return false;
  const actual = await derive(password, parsed.salt, parsed.n, parsed.r, parsed.p, admission);
  return actual.length === parsed.hash.length && timingSafeEqual(actual, parsed.hash);
}

/** True when `stored` was made with weaker parameters than new hashes get: rehash it at the next login. */
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  return parsed === null || parsed.n < N || parsed.r < R || parsed.p < P;
}
