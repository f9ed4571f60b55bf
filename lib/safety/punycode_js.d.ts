// punycode.js ships no types; these are the two functions we use (RFC 3492 codec by Mathias Bynens).
declare module 'punycode.js' {
  /** Converts a punycode-encoded domain name (or label) to Unicode; ASCII labels pass through. */
  export function toUnicode(input: string): string;
  /** Decodes a punycode string (without the xn-- prefix) to Unicode. */
  export function decode(input: string): string;
  const punycode: { toUnicode: typeof toUnicode; decode: typeof decode };
  export default punycode;
}
