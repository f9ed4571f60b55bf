/**
 * Canonical redirect targets: the one form of a destination Lifeline stores and sends in `Location`, chosen so
 * that every URL parser (browsers' WHATWG parser, RFC 3986 parsers such as curl's or Python's) reads the same
 * scheme, host and port from it. Pure and runtime-neutral (Node and Deno): nothing imported but its neighbour
 * punycode_label.ts, and the global `URL`.
 *
 * The canonical form is `new URL(value).href` with a few tightenings; an input that is already canonical comes
 * back byte-identical (no percent-escape case changes, no decoding, the query untouched). Decisions:
 * - Refused anywhere in the input: C0/C1 controls, every Unicode space, invisible format characters (bidi
 *   overrides, zero-width spaces, soft hyphen, BOM) and lone surrogates; in the host also the joiners (ZWJ,
 *   ZWNJ), the combining grapheme joiner and variation selectors, which IDNA drops without a trace (in a path
 *   they are text, and get percent-encoded). WHATWG silently strips tabs and newlines and trims spaces, so the
 *   stored URL would differ from what was checked.
 * - Backslashes are refused everywhere. WHATWG reads `\` as `/` in the scheme, authority and path of http(s)
 *   URLs while curl and Python read it as data, which is how `https://news.example\@evil.example/` goes to
 *   news.example in a browser and to evil.example in curl; in a path, rewriting it would change what the editor
 *   typed, and in a query it is invalid RFC 3986. No real permalink has one; `%5C` is kept as it is.
 * - Userinfo (any `@` before the host, even an empty `https://@host/`) and a percent-encoded host are refused:
 *   both exist only to make a URL read differently to a person or another parser.
 * - Host: lower-case ASCII; an internationalised name becomes punycode (as WHATWG's IDNA mapping gives it,
 *   which also turns full-width letters and the dots `。` `．` `｡` into ASCII); one trailing dot is dropped
 *   (`news.example.` → `news.example`); empty labels (`a..b`, `.a`, `a..`), labels over 63 and names over 253
 *   characters, characters other than letters, digits, `-` and `_`, and `xn--` labels that are not the
 *   punycode of a valid name are refused. Whether a name looks like another is left to lookalike_host.ts.
 * - IPv4: only the dotted-quad form is accepted. Decimal (`2130706433`), hex, octal, short (`127.1`) and
 *   zero-padded forms are refused, not rewritten: parsers disagree on them (Python sees a name, browsers an
 *   address) and no newsroom link uses them except to hide where it goes. IPv6 literals are accepted in the
 *   RFC 5952 form WHATWG writes (`[0:0::1]` → `[::1]`); zone identifiers fail to parse.
 * - Ports: the scheme's default port is dropped (`:443` on https), others kept; port 0 is refused.
 * - Path, query and fragment are percent-encoded as WHATWG serialises them (non-ASCII becomes UTF-8 escapes,
 *   dot segments including `%2e%2e` are resolved, `'` in the query becomes `%27`), plus `^` in the path, which
 *   the current WHATWG standard escapes and older implementations (Deno's) do not. A `%` that does not start a
 *   `%XX` escape is refused (it has no form every parser reads alike). The fragment is kept.
 * - The result is at most CANONICAL_TARGET_MAX_BYTES long and printable ASCII, and it is read back with an
 *   RFC 3986 reader (below) and by WHATWG again: scheme, host and port must agree and the form must be a fixed
 *   point, or it is refused.
 *
 * Where a canonical target may point (the deployment's policy) is decided by target_rule.ts; whether an `xn--`
 * label is valid punycode by punycode_label.ts.
 */

import { isValidPunycodeLabel } from './punycode_label.ts';

/** Longest target in UTF-8 bytes, before and after canonicalisation (as link.ts's TARGET_URL_MAX_BYTES). */
export const CANONICAL_TARGET_MAX_BYTES = 2048;

/** A target in its canonical form (`host` carries a non-default port, `hostname` never), or why there is none. */
export type CanonicalTarget =
  | { ok: true; url: string; host: string; hostname: string }
  | { ok: false; problem: string };

/** The problem texts (zod-friendly: they complete "url ..."). */
export const TARGET_PROBLEMS = {
  tooLong: `must be at most ${CANONICAL_TARGET_MAX_BYTES} bytes`,
  tooLongEncoded: `must be at most ${CANONICAL_TARGET_MAX_BYTES} bytes once percent-encoded`,
  notString: 'must be a string',
  controlCharacters: 'must not contain spaces or control characters',
  notAbsolute: 'must be an absolute URL',
  scheme: 'must use http or https',
  noHost: 'must be an absolute http(s) URL with a host',
  backslash: 'must not contain a backslash (write it as %5C)',
  emptyHost: 'must have a host',
  credentials: 'must not contain credentials',
  encodedHost: 'must not percent-encode its host',
  invalidHost: 'must have a valid host name',
  hostCharacters: 'must have a host name of letters, digits, "-" and "_"',
  emptyLabel: 'must not have an empty label in its host name',
  hostLength: 'must have a host name of at most 253 characters, and labels of at most 63',
  punycode: 'must not have an invalid punycode (xn--) label in its host name',
  port: 'must have a port from 1 to 65535',
  percent: 'must not contain a "%" that does not start a %XX escape (write it as %25)',
  disagreement: 'must read the same to every URL parser',
  notCanonical: 'must be in canonical form (canonicalizeTarget)',
  ownHost: 'must not point at the short domain itself',
} as const;

/** The default port of each scheme a target may use. */
export const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443' };
const HOST_NAME_MAX_LENGTH = 253;
const LABEL_MAX_LENGTH = 63;

// A subset of canonical URLs recognised by one regular expression (compiled to native code, and as fast on
// every kind of V8 string, where a character loop slows down threefold once it has seen many): lower-case
// http(s); host labels of [a-z0-9_-], none empty, longer than 63 or starting "xn--", the last one starting
// with a letter (so never an IPv4 address); no port; a path of RFC 3986 pchar and %XX escapes with no "." or
// ".." segment and no %2e; a query without "'" (WHATWG escapes it); a fragment. Anything else takes the slow
// path, which may still accept it.
const PCHAR = "[A-Za-z0-9\\-._~!$&'()*+,;=:@]";
const HEX_PAIR = '[0-9A-Fa-f]{2}';
const LABEL = '(?!xn--)[a-z0-9_-]{1,63}';
const CANONICAL_FAST = new RegExp(
  '^https?://' +
    `(?:${LABEL}\\.)*(?!xn--)[a-z][a-z0-9_-]{0,62}` +
    `(?:/(?!\\.\\.?(?:[/?#]|$))(?:${PCHAR}|%(?!2[eE])${HEX_PAIR})*)+` +
    `(?:\\?(?:[A-Za-z0-9\\-._~!$&()*+,;=:@/?]|%${HEX_PAIR})*)?` +
    `(?:#(?:${PCHAR}|[/?]|%${HEX_PAIR})*)?$`,
);

// Invisible or space-like characters beyond ASCII: other spaces and line separators, C1 controls, format
// characters except the joiners (ZWJ/ZWNJ, which Persian and emoji text needs; IDNA refuses them in hosts),
// lone surrogates, and the Hangul fillers that render as nothing.
const INVISIBLE = /[\p{Z}\p{Cc}\p{Cs}\u115f\u1160\u3164\uffa0]|(?![\u200c\u200d])\p{Cf}/u;
// Characters IDNA drops from a host without a trace (joiners, the combining grapheme joiner, variation
// selectors): a host spelt with them is refused rather than silently read as another spelling.
// biome-ignore lint/suspicious/noMisleadingCharacterClass: each code point is refused on its own, not as a sequence
const HOST_INVISIBLE = /[\u200c\u200d\u034f\u180b-\u180f\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;
const DOTTED_QUAD = /^(?:0|[1-9][0-9]{0,2})(?:\.(?:0|[1-9][0-9]{0,2})){3}$/;
const HOST_LABEL = /^[a-z0-9_-]+$/;

/**
 * The canonical form of a redirect target, or a problem text. An already canonical URL (every WordPress
 * permalink) comes back byte-identical; see the module comment for what is rewritten and what is refused.
 */
export function canonicalizeTarget(value: string): CanonicalTarget {
  if (typeof value !== 'string') return refuse(TARGET_PROBLEMS.notString);
  const hostEnd = findCanonicalHostEnd(value);
  if (hostEnd > 0) {
    const hostname = value.slice(value.charCodeAt(4) === 115 ? 8 : 7, hostEnd);
    return { ok: true, url: value, host: hostname, hostname };
  }
  return canonicalizeSlowly(value);
}

/**
 * The canonical form of a bare host name (`News.Example.` → `news.example`, `münchen.de` →
 * `xn--mnchen-3ya.de`, `[0::1]` → `[::1]`), or null when it is not one.
 */
export function canonicalizeHost(value: string): string | null {
  if (typeof value !== 'string' || value === '' || /[/?#@\\%]/.test(value)) return null;
  // A colon belongs only inside an IPv6 literal: "host:port" is not a host name.
  if (value.startsWith('[') ? !value.endsWith(']') : value.includes(':')) return null;
  const canonical = canonicalizeTarget(`https://${value}/`);
  return canonical.ok && canonical.host === canonical.hostname ? canonical.hostname : null;
}

function refuse(problem: string): CanonicalTarget {
  return { ok: false, problem };
}

/** The end of the host when `value` is recognisably canonical already (CANONICAL_FAST), else -1. */
export function findCanonicalHostEnd(value: string): number {
  if (value.length > CANONICAL_TARGET_MAX_BYTES || !CANONICAL_FAST.test(value)) return -1;
  const hostStart = value.charCodeAt(4) === 115 /* s */ ? 8 : 7;
  const hostEnd = value.indexOf('/', hostStart);
  return hostEnd - hostStart > HOST_NAME_MAX_LENGTH ? -1 : hostEnd;
}

function canonicalizeSlowly(value: string): CanonicalTarget {
  const problem = findCharacterProblem(value);
  if (problem !== null) return refuse(problem);

  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(value);
  if (scheme === null) return refuse(TARGET_PROBLEMS.notAbsolute);
  const protocol = `${scheme[1]!.toLowerCase()}:`;
  if (DEFAULT_PORTS[protocol] === undefined) return refuse(TARGET_PROBLEMS.scheme);
  if (value.includes('\\')) return refuse(TARGET_PROBLEMS.backslash);
  const authorityStart = protocol.length + 2;
  if (!value.startsWith('//', protocol.length) || /^[/?#]?$/.test(value.charAt(authorityStart))) {
    return refuse(TARGET_PROBLEMS.noHost);
  }

  // The authority as every parser delimits it once backslashes are gone: up to the first "/", "?" or "#".
  const rest = value.slice(authorityStart);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  if (authority.includes('@')) return refuse(TARGET_PROBLEMS.credentials);
  if (authority.includes('%')) return refuse(TARGET_PROBLEMS.encodedHost);
  const isBracketed = authority.startsWith('[');
  if (isBracketed && !authority.includes(']')) return refuse(TARGET_PROBLEMS.invalidHost);
  const rawHost = isBracketed ? authority.slice(0, authority.indexOf(']') + 1) : authority.split(':', 1)[0]!;
  if (rawHost === '') return refuse(TARGET_PROBLEMS.emptyHost);
  if (HOST_INVISIBLE.test(rawHost)) return refuse(TARGET_PROBLEMS.controlCharacters);
  const portText = authority.slice(rawHost.length + 1);
  if (authority.charAt(rawHost.length) === ':' && portText !== '') {
    const port = /^[0-9]+$/.test(portText) ? Number(portText) : Number.NaN;
    if (!(port >= 1 && port <= 65535)) return refuse(TARGET_PROBLEMS.port);
  }

  // Checked before parsing too, as some WHATWG implementations fail on these and others do not.
  for (const label of rawHost.toLowerCase().split('.')) {
    if (label.startsWith('xn--') && !isValidPunycodeLabel(label)) return refuse(TARGET_PROBLEMS.punycode);
  }

  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return refuse(TARGET_PROBLEMS.invalidHost);
  }
  // Belt and braces: the checks above already rule these out.
  if (url.protocol !== protocol || url.username !== '' || url.password !== '') {
    return refuse(TARGET_PROBLEMS.disagreement);
  }

  const hostProblem = findHostProblem(url.hostname, rawHost);
  if (hostProblem !== null) return refuse(hostProblem);
  const hostname = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  if (url.port === '0') return refuse(TARGET_PROBLEMS.port);
  const host = url.port === '' ? hostname : `${hostname}:${url.port}`;

  const href = url.href;
  const prefix = `${protocol}//${url.host}`;
  if (!href.startsWith(prefix)) return refuse(TARGET_PROBLEMS.disagreement);
  let tail = href.slice(prefix.length);
  const pathEnd = tail.search(/[?#]|$/);
  if (tail.lastIndexOf('^', pathEnd) >= 0) {
    tail = tail.slice(0, pathEnd).replaceAll('^', '%5E') + tail.slice(pathEnd);
  }
  if (/%(?![0-9A-Fa-f]{2})/.test(tail)) return refuse(TARGET_PROBLEMS.percent);
  const canonical = `${protocol}//${host}${tail}`;
  if (canonical.length > CANONICAL_TARGET_MAX_BYTES) return refuse(TARGET_PROBLEMS.tooLongEncoded);

  if (!isReadAlike(canonical, protocol, hostname, url.port)) return refuse(TARGET_PROBLEMS.disagreement);
  return { ok: true, url: canonical, host, hostname };
}

/** The first character-level problem: size in UTF-8 bytes, then controls, spaces and invisible characters. */
function findCharacterProblem(value: string): string | null {
  if (value.length > CANONICAL_TARGET_MAX_BYTES) return TARGET_PROBLEMS.tooLong;
  let bytes = 0;
  let ascii = true;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x80) {
      if (c <= 0x20 || c === 0x7f) return TARGET_PROBLEMS.controlCharacters;
      bytes += 1;
    } else {
      ascii = false;
      // A surrogate pair is four bytes, two per half; a lone surrogate is refused below.
      bytes += c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdfff ? 2 : 3;
    }
  }
  if (bytes > CANONICAL_TARGET_MAX_BYTES) return TARGET_PROBLEMS.tooLong;
  if (!ascii && INVISIBLE.test(value)) return TARGET_PROBLEMS.controlCharacters;
  return null;
}

/**
 * Why WHATWG's host name (`hostname`, from the raw authority host `rawHost`) has no canonical form, or null.
 */
function findHostProblem(hostname: string, rawHost: string): string | null {
  if (hostname.startsWith('[')) return null; // IPv6: WHATWG has validated and compressed it.
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (name === '') return TARGET_PROBLEMS.emptyHost;
  if (DOTTED_QUAD.test(name)) {
    // An IPv4 address: only accepted as written, four decimal numbers.
    const written = rawHost.toLowerCase();
    return written === name || written === `${name}.` ? null : `must write its IPv4 host as ${name}`;
  }
  if (name.length > HOST_NAME_MAX_LENGTH) return TARGET_PROBLEMS.hostLength;
  for (const label of name.split('.')) {
    if (label === '') return TARGET_PROBLEMS.emptyLabel;
    if (label.length > LABEL_MAX_LENGTH) return TARGET_PROBLEMS.hostLength;
    if (!HOST_LABEL.test(label)) return TARGET_PROBLEMS.hostCharacters;
    if (label.startsWith('xn--') && !isValidPunycodeLabel(label)) return TARGET_PROBLEMS.punycode;
  }
  return null;
}

/**
 * Reads `canonical` as an RFC 3986 parser does (Appendix B's split, then the authority's grammar) and as WHATWG
 * does, and checks that both see `protocol`, `hostname` and `port`, no userinfo, and that WHATWG serialises it
 * unchanged (a fixed point).
 */
function isReadAlike(canonical: string, protocol: string, hostname: string, port: string): boolean {
  const parts = /^([^:/?#]+):\/\/([^/?#]*)([^?#]*)(?:\?[^#]*)?(?:#.*)?$/.exec(canonical);
  if (parts === null || `${parts[1]}:` !== protocol || !/^\//.test(parts[3]!)) return false;
  const authority = parts[2]!;
  const rfc = /^(\[[0-9a-f:.]+\]|[a-z0-9_.~!$&'()*+,;=-]+)(?::([0-9]+))?$/.exec(authority);
  if (rfc === null || rfc[1] !== hostname || (rfc[2] ?? '') !== port) return false;
  try {
    const again = new URL(canonical);
    return (
      again.href === canonical && again.hostname === hostname && again.port === port && again.username === ''
    );
  } catch {
    return false;
  }
}
