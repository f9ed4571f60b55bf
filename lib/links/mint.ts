import { CODE_ALPHABET } from '../shared/config.ts';
import { isPossibleCode } from './code_rules.ts';

/** How many fresh codes one creation tries before giving up (a UNIQUE violation each time). */
export const MINT_MAX_ATTEMPTS = 8;

/**
 * Draws a code from the CSPRNG: `length` characters of the 64-letter alphabet (no modulo bias, since 64
 * divides 256). Never reserved, never `_`-prefixed; redraws in that rare case.
 */
export function mintCode(length: number): string {
  for (;;) {
    const bytes = crypto.getRandomValues(new Uint8Array(length));
    let code = '';
    for (const b of bytes) code += CODE_ALPHABET[b & 63];
    if (isPossibleCode(code)) return code;
  }
}
