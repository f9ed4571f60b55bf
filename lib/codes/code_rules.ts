import { z } from 'zod';
import { fieldProblem } from '../shared/field_problems.ts';

// What a code (minted or a custom alias) may look like. The redirect hot path asks isPossibleCode before any
// lookup; minting and the alias schema follow the same rules.

/** Longest code or alias we ever store or look up; anything longer is impossible and 404s unread. */
export const CODE_MAX_LENGTH = 64;
/** Shortest custom alias accepted at creation. */
export const ALIAS_MIN_LENGTH = 3;
/** Longest target URL in UTF-8 bytes. */
/** Path segments that belong to the product, never to a code (compared case-insensitively). */
export const RESERVED_CODES: ReadonlySet<string> = new Set([
  'api',
  'ui',
  'healthz',
  'livez',
  'readyz',
  'metrics',
  'static',
  'assets',
  'admin',
  'login',
  'logout',
  'docs',
  'openapi',
  'robots',
  'favicon',
  'well-known',
]);

/** The characters of a code or alias (the alias schema's rule; isPossibleCode checks the same by hand). */
const CODE_CHARS = /^[A-Za-z0-9_-]+$/;

/** Longest reserved word: shorter codes are the only ones that need the reserved-word check. */
const RESERVED_MAX_LENGTH = Math.max(...[...RESERVED_CODES].map((word) => word.length));
// isPossibleCode relies on it: a reserved word with a digit or `_` would need its check changed.
for (const word of RESERVED_CODES) {
  if (!/^[a-z-]+$/.test(word)) throw new Error(`reserved code ${word}: lower-case letters and - only`);
}

/**
 * True when `code` could name a link: charset [A-Za-z0-9_-], length, not reserved, not `_`-prefixed. Cheap (it
 * runs on every short-host request): a character loop, and a lower-cased copy only for codes short enough to
 * be a reserved word.
 */
export function isPossibleCode(code: string): boolean {
  const length = code.length;
  if (length === 0 || length > CODE_MAX_LENGTH || code.charCodeAt(0) === 95 /* _ */) return false;
  // Reserved words are letters and `-` only: a code with a digit or `_` needs no lower-cased copy to rule them out.
  let wordLike = length <= RESERVED_MAX_LENGTH;
  for (let i = 0; i < length; i++) {
    const c = code.charCodeAt(i);
    if ((c >= 97 && c <= 122) /* a-z */ || (c >= 65 && c <= 90) /* A-Z */ || c === 45 /* - */) continue;
    if ((c >= 48 && c <= 57) /* 0-9 */ || c === 95 /* _ */) wordLike = false;
    else return false;
  }
  return !wordLike || !RESERVED_CODES.has(code.toLowerCase());
}

/** A short domain's name as a link's key carries it: lower-case letters, digits, `-` and dots. */
const KEY_DOMAIN =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * True when `key` could name a link (lib/shared/link_key.ts): a possible code on the default short domain, or
 * `{domain}/{code}` with a host name and a possible code. Not for the hot path, which asks isPossibleCode of the
 * path's code and builds the key itself.
 */
export function isPossibleLinkKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  if (slash < 0) return isPossibleCode(key);
  return KEY_DOMAIN.test(key.slice(0, slash)) && isPossibleCode(key.slice(slash + 1));
}

export const aliasSchema = z
  .string()
  .min(ALIAS_MIN_LENGTH, `must be at least ${ALIAS_MIN_LENGTH} characters`)
  .max(CODE_MAX_LENGTH, `must be at most ${CODE_MAX_LENGTH} characters`)
  .regex(CODE_CHARS, fieldProblem('codeChars'))
  .refine((v) => !v.startsWith('_'), fieldProblem('noUnderscoreStart'))
  .refine((v) => !RESERVED_CODES.has(v.toLowerCase()), fieldProblem('reserved'));
