import punycode from 'punycode.js';
import { checkLookalikeHost } from '../safety/lookalike_host.ts';

// How a URL is shown to people: the IRI (RFC 3987) where that is safe. Only for display: redirects use the
// stored bytes (lib/redirect/redirect_policy.ts, toLocation), and nothing shown here is ever parsed back.

/**
 * Characters a decoded URL must not show as themselves, because they are invisible, reorder the text around
 * them, pass for a URL delimiter, or cannot be told apart from another character: controls, format
 * characters (bidi embeddings, overrides, isolates and marks; zero-width joiners; the BOM), private use and
 * unassigned code points, every kind of space and line separator, default-ignorable code points (Hangul
 * fillers, variation selectors), the replacement character, look-alikes of "/", "?", "#" and ".", and the
 * lock emoji (which could fake a padlock). They stay percent-encoded (and are encoded when stored raw).
 */
const UNSAFE =
  /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Z}\p{Default_Ignorable_Code_Point}\u{FFFD}\u{2044}\u{2215}\u{29F8}\u{2571}\u{FF0F}\u{FF1F}\u{FF03}\u{2024}\u{3002}\u{FF0E}\u{FF61}\u{1F50F}-\u{1F513}]/u;
const MARK = /^\p{M}$/u;
const ASCII = /^\p{ASCII}$/u;
const PRINTABLE_ASCII = /^[\x21-\x7e]$/;

const utf8 = new TextEncoder();

/** A character as uppercase percent-escapes of its UTF-8 bytes. */
function percentEncode(ch: string): string {
  return [...utf8.encode(ch)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/** Whether `ch` may be shown decoded after `before` (the character shown just before it, '' at the start). */
function isShowable(ch: string, before: string): boolean {
  if (UNSAFE.test(ch)) return false;
  // A combining mark must sit on a decoded letter, never on a delimiter or other ASCII it could disguise.
  if (MARK.test(ch) && (before === '' || ASCII.test(before))) return false;
  return true;
}

/** Length of the UTF-8 sequence a lead byte starts, 0 when it cannot start one. */
function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** The code point of a well-formed UTF-8 sequence (no overlongs, surrogates or values above U+10FFFF), or null. */
function decodeSequence(bytes: number[]): string | null {
  const [lead, second] = bytes as [number, number];
  if (bytes.slice(1).some((b) => b < 0x80 || b > 0xbf)) return null;
  if (lead === 0xe0 && second < 0xa0) return null;
  if (lead === 0xed && second > 0x9f) return null;
  if (lead === 0xf0 && second < 0x90) return null;
  if (lead === 0xf4 && second > 0x8f) return null;
  let cp = lead & (0xff >> (bytes.length + 1));
  for (const b of bytes.slice(1)) cp = (cp << 6) | (b & 0x3f);
  return String.fromCodePoint(cp);
}

/**
 * A path, query or fragment for people: percent-escapes that spell non-ASCII UTF-8 are decoded; escaped ASCII
 * (`%2F`, `%3F`, `%25`, `%20`…) stays escaped, so decoding never adds a delimiter or changes what the URL
 * says; invalid or truncated escapes stay as written; unsafe characters stay (or become) escaped.
 */
function decodeComponent(text: string): string {
  let out = '';
  let last = '';
  const emit = (shown: string, lastChar: string) => {
    out += shown;
    last = lastChar;
  };
  const pieces = text.match(/(?:%[0-9A-Fa-f]{2})+|%|[^%]+/g) ?? [];
  for (const piece of pieces) {
    if (!piece.startsWith('%') || piece === '%') {
      for (const ch of piece) {
        if (PRINTABLE_ASCII.test(ch) || isShowable(ch, last)) emit(ch, ch);
        else emit(percentEncode(ch), '%');
      }
      continue;
    }
    const escapes = piece.match(/%[0-9A-Fa-f]{2}/g)!;
    const bytes = escapes.map((e) => Number.parseInt(e.slice(1), 16));
    for (let i = 0; i < bytes.length; ) {
      const length = sequenceLength(bytes[i]!);
      const decoded =
        length > 0 && i + length <= bytes.length ? decodeSequence(bytes.slice(i, i + length)) : null;
      if (decoded !== null && isShowable(decoded, last)) {
        emit(decoded, decoded);
        i += length;
      } else {
        // ASCII escapes, invalid bytes and unsafe characters: as written, one escape (or sequence) at a time.
        const taken = decoded !== null ? length : 1;
        emit(escapes.slice(i, i + taken).join(''), '%');
        i += taken;
      }
    }
  }
  return out;
}

/**
 * A host for people: punycode labels shown in Unicode, unless the name is built to look like another
 * (mixed scripts, confusable letters: lib/safety/lookalike_host.ts) or decodes to something unsafe to show —
 * then the whole host stays in punycode, which is what the URL really says.
 */
function decodeHost(host: string): string {
  if (/\P{ASCII}/u.test(host)) {
    // Stored in Unicode already: shown so unless its punycode form is a look-alike.
    let ascii: string;
    try {
      ascii = new URL(`http://${host}/`).hostname;
    } catch {
      return host;
    }
    return checkLookalikeHost(ascii) ? ascii : host;
  }
  if (!/(^|\.)xn--/i.test(host)) return host;
  const ascii = host.toLowerCase();
  if (checkLookalikeHost(ascii)) return host;
  let unicode: string;
  try {
    unicode = punycode.toUnicode(ascii);
  } catch {
    return host;
  }
  return [...unicode].every((ch) => ch === '.' || isShowable(ch, 'a')) ? unicode : host;
}

/**
 * A URL as people should read it (the IRI): percent-decoded UTF-8 in the path, query and fragment, punycode
 * hosts in Unicode, wherever that cannot mislead (see decodeComponent and decodeHost). A string that is not a
 * URL with an authority gets the same treatment as a path. Show it left-to-right (RFC 3987, 4.1).
 */
export function toDisplayUrl(url: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s.exec(url);
  if (!m) return decodeComponent(url);
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : '';
  const hostPort = authority.slice(at + 1);
  // An IPv6 literal or a host with a port: only the name part is decoded.
  const hp = /^(\[[^\]]*\]|[^:]*)(.*)$/s.exec(hostPort)!;
  const host = hp[1]!.startsWith('[') ? hp[1]! : decodeHost(hp[1]!);
  return `${scheme}${decodeComponent(userinfo)}${decodeComponent(host)}${hp[2]}${decodeComponent(rest)}`;
}
