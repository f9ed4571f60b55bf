import { chooseRoute, type RouteVariant } from './route_choice.ts';
import type { ServingRecord, ServingUtm } from './serving_record.ts';

/** How this deployment answers redirects (REDIRECT_STATUS, REDIRECT_CACHE_CONTROL, UTM_PARAMS, FORWARD_QUERY_PARAMS). */
export interface RedirectSettings {
  status: number;
  cacheControl: string;
  utmParams: string | undefined;
  /** Request query parameters passed on to the target (exact, case-sensitive names); empty: none. */
  forwardQueryParams?: readonly string[];
  /**
   * How a link switched to its archived copy answers (DEAD_FALLBACK_ANSWER): `page` (default), our page with
   * the copy and the original URL, or `redirect`, a 302 to the copy.
   */
  fallbackAnswer?: 'page' | 'redirect';
}

/** What the short host answers for one request: runtime-neutral, turned into a Response by an adapter. */
export interface RedirectDecision {
  status: number;
  /** Metric label: redirect, not_found, gone, expired, blocked, warn, archived (the dead destination's copy). */
  outcome: 'redirect' | 'not_found' | 'gone' | 'expired' | 'blocked' | 'warn' | 'archived';
  location?: string;
  cacheControl: string;
  /**
   * The page to render for non-redirect answers. `destination`: where the page's button leads (the warn
   * page's target, the archived page's copy); `original`: the archived page's dead target, shown as text.
   */
  page?: {
    kind: 'not_found' | 'gone' | 'expired' | 'blocked' | 'warn' | 'archived';
    code: string;
    destination?: string;
    original?: string;
  };
  /** The request headers the answer was chosen by (a link with routing rules): the `Vary` header. */
  vary?: string;
}

/** Short negative answers are cacheable briefly so a CDN absorbs floods of unknown codes. */
const NOT_FOUND_CACHE_CONTROL = 'public, max-age=60';
const GONE_CACHE_CONTROL = 'public, max-age=300';
const NO_STORE = 'no-store';

/**
 * Decides the answer for a code from its serving record (null: unknown). Pure: the same record, time and
 * settings always give the same answer; the caller has already rejected impossible codes.
 *
 * A request with a query (every printed QR code is `/{code}?qr=1`) is never answered shared-cacheable: a CDN
 * keys it apart from `/{code}`, and a purge names only the paths, so a CDN copy of the variant would outlive
 * every change of the link until its TTL ran out. It is answered `private` (browsers may still keep it for the
 * same max-age); the plain path keeps REDIRECT_CACHE_CONTROL and stays purgeable (docs/OPERATIONS.md).
 */
export function decideRedirect(
  code: string,
  record: ServingRecord | null,
  nowMs: number,
  settings: RedirectSettings,
  requestQuery = '',
): RedirectDecision {
  const decision = decideForRecord(code, record, nowMs, settings, requestQuery);
  if (requestQuery === '') return decision;
  const cacheControl = toUnsharedCacheControl(decision.cacheControl);
  return cacheControl === decision.cacheControl ? decision : { ...decision, cacheControl };
}

/**
 * decideRedirect for a link with routing rules (ADR 0080): the first rule `variant` matches sends the reader to
 * its target, as if it were the link's own (the same UTM parameters, redirect status, warn page; the archived
 * copy stands in for the link's own target only); no match, the link's own answer. Either way the answer says
 * which headers chose it (`vary`) and is never shared-cacheable: shared caches and CDNs key and purge by path,
 * most ignore or refuse `Vary` on User-Agent or a country header, and one cached variant would answer every
 * reader. Browsers may still keep it for the same max-age (their own language, device and country).
 */
export function decideRoutedRedirect(
  code: string,
  record: ServingRecord & { rules: NonNullable<ServingRecord['rules']> },
  variant: RouteVariant,
  vary: string,
  nowMs: number,
  settings: RedirectSettings,
  requestQuery = '',
): RedirectDecision & { route: number } {
  const route = chooseRoute(record.rules, variant);
  const chosen = route < 0 ? record : routeRecord(record, route);
  const decision = decideRedirect(code, chosen, nowMs, settings, requestQuery);
  const cacheControl = toUnsharedCacheControl(decision.cacheControl);
  return vary === '' ? { ...decision, cacheControl, route } : { ...decision, cacheControl, vary, route };
}

/** The record as rule `index` answers it: the rule's target in place of the link's, no archived copy, no rules. */
export function routeRecord(record: ServingRecord, index: number): ServingRecord {
  const { fallbackUrl: _fallback, rules, ...rest } = record;
  return { ...rest, url: rules![index]!.target };
}

/** Directives that already keep an answer out of shared caches (or make them revalidate every time). */
const UNSHARED = /(?:^|[\s,])(?:private|no-store|no-cache)(?:[\s,=]|$)/i;
let lastShared = '';
let lastUnshared = '';

/**
 * `cacheControl` for a private cache only: unchanged when it is not shared-cacheable already, otherwise
 * `private` with its browser max-age (s-maxage and the rest are for shared caches). Remembers the last
 * conversion: a deployment has one REDIRECT_CACHE_CONTROL and two fixed negative answers.
 */
export function toUnsharedCacheControl(cacheControl: string): string {
  if (cacheControl === lastShared) return lastUnshared;
  if (UNSHARED.test(cacheControl)) return cacheControl;
  lastShared = cacheControl;
  lastUnshared = `private, max-age=${maxAgeOf(cacheControl)}`;
  return lastUnshared;
}

function decideForRecord(
  code: string,
  record: ServingRecord | null,
  nowMs: number,
  settings: RedirectSettings,
  requestQuery: string,
): RedirectDecision {
  if (!record || record.status === 'pending') {
    return {
      status: 404,
      outcome: 'not_found',
      cacheControl: NOT_FOUND_CACHE_CONTROL,
      page: { kind: 'not_found', code },
    };
  }
  const expired = record.status === 'expired' || (record.expiresAt !== null && record.expiresAt <= nowMs);
  if (record.status === 'blocked' || record.safety === 'blocked') {
    return { status: 451, outcome: 'blocked', cacheControl: NO_STORE, page: { kind: 'blocked', code } };
  }
  if (record.status === 'gone') {
    return { status: 410, outcome: 'gone', cacheControl: GONE_CACHE_CONTROL, page: { kind: 'gone', code } };
  }
  if (expired) {
    if (record.expiredUrl) {
      return {
        status: 302,
        outcome: 'expired',
        cacheControl: NO_STORE,
        location: toLocation(record.expiredUrl),
      };
    }
    return { status: 410, outcome: 'expired', cacheControl: NO_STORE, page: { kind: 'expired', code } };
  }
  if (record.fallbackUrl !== undefined) {
    // The destination is dead and the link's policy is `fallback`: the archived copy, never the dead target.
    // Not cacheable: a later check that finds the destination alive switches the link back.
    const copy = toLocation(record.fallbackUrl);
    if (settings.fallbackAnswer === 'redirect') {
      return { status: 302, outcome: 'archived', cacheControl: NO_STORE, location: copy };
    }
    return {
      status: 200,
      outcome: 'archived',
      cacheControl: NO_STORE,
      page: { kind: 'archived', code, destination: copy, original: record.url },
    };
  }
  const forwarded =
    settings.forwardQueryParams && settings.forwardQueryParams.length > 0 && requestQuery !== ''
      ? forwardedQuery(requestQuery, settings.forwardQueryParams)
      : '';
  // Precedence, first wins (nothing ever replaces a key already there): the target's own query, then
  // forwarded request parameters, then the link's own UTM values, then the deployment's UTM_PARAMS.
  const target = toLocation(
    appendUtmParams(appendLinkUtm(appendUtmParams(record.url, forwarded), record.utm), settings.utmParams),
  );
  if (record.safety === 'warn') {
    return {
      status: 200,
      outcome: 'warn',
      cacheControl: NO_STORE,
      page: { kind: 'warn', code, destination: target },
    };
  }
  // A link that expires soon must not be cached past its expiry.
  let cacheControl = settings.cacheControl;
  if (record.expiresAt !== null) {
    const secondsLeft = Math.floor((record.expiresAt - nowMs) / 1000);
    cacheControl = `private, max-age=${Math.max(0, Math.min(secondsLeft, maxAgeOf(settings.cacheControl)))}`;
  }
  return {
    status: record.redirectStatus ?? settings.status,
    outcome: 'redirect',
    cacheControl,
    location: target,
  };
}

function maxAgeOf(cacheControl: string): number {
  const m = /(?:^|[\s,])max-age=(\d+)/.exec(cacheControl);
  return m ? Number(m[1]) : 0;
}

/**
 * Appends configured UTM parameters to a target, never replacing a key the target already has, and
 * keeping every existing byte (including the fragment) as stored.
 */
export function appendUtmParams(target: string, utmParams: string | undefined): string {
  if (!utmParams) return target;
  return appendParams(target, [...new URLSearchParams(utmParams)]);
}

/** The utm_* names of a link's own values. */
const LINK_UTM_KEYS = [
  ['campaign', 'utm_campaign'],
  ['source', 'utm_source'],
  ['medium', 'utm_medium'],
] as const;

/**
 * Appends a link's own UTM values (utm_campaign, utm_source, utm_medium) like appendUtmParams: never
 * replacing a key the target already has, every existing byte kept.
 */
export function appendLinkUtm(target: string, utm: ServingUtm | undefined): string {
  if (!utm) return target;
  const pairs: [string, string][] = [];
  for (const [field, key] of LINK_UTM_KEYS) {
    const value = utm[field];
    if (value) pairs.push([key, value]);
  }
  return pairs.length === 0 ? target : appendParams(target, pairs);
}

/** Appends name=value pairs (UTF-8 percent-encoded) whose name the target's query does not have yet. */
function appendParams(target: string, params: readonly (readonly [string, string])[]): string {
  const hashAt = target.indexOf('#');
  const beforeHash = hashAt < 0 ? target : target.slice(0, hashAt);
  const fragment = hashAt < 0 ? '' : target.slice(hashAt);
  const queryAt = beforeHash.indexOf('?');
  const query = queryAt < 0 ? '' : beforeHash.slice(queryAt + 1);
  const present = new Set<string>();
  for (const pair of query.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    try {
      present.add(decodeURIComponent(rawKey.replace(/\+/g, ' ')));
    } catch {
      present.add(rawKey);
    }
  }
  const additions: string[] = [];
  for (const [key, value] of params) {
    if (!present.has(key)) additions.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  }
  if (additions.length === 0) return target;
  const separator = queryAt < 0 ? '?' : query === '' || query.endsWith('&') ? '' : '&';
  return `${beforeHash}${separator}${additions.join('&')}${fragment}`;
}

/** A forwarded value longer than this is dropped (a Location header must stay bounded). */
export const FORWARDED_VALUE_MAX_LENGTH = 256;
/** The QR-scan marker (`?qr=1`) counts the click as a scan and is never passed on to the target. */
export const QR_MARKER = 'qr';

/**
 * The request's allowed query parameters (first value of each), re-encoded so the result is plain
 * `name=value` pairs of printable ASCII without `#`, `/`, `?`, backslash or CR/LF: appended to the target's query,
 * it can never change the target's scheme, host, path or fragment. Malformed escapes drop the pair.
 */
export function forwardedQuery(requestQuery: string, allowed: readonly string[]): string {
  const pairs: string[] = [];
  const seen = new Set<string>();
  for (const raw of requestQuery.split('&')) {
    if (!raw) continue;
    const eq = raw.indexOf('=');
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent((eq < 0 ? raw : raw.slice(0, eq)).replace(/\+/g, ' '));
      value = eq < 0 ? '' : decodeURIComponent(raw.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      continue;
    }
    if (key === QR_MARKER || seen.has(key) || !allowed.includes(key)) continue;
    if (value.length > FORWARDED_VALUE_MAX_LENGTH) continue;
    seen.add(key);
    pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  }
  return pairs.join('&');
}

const PRINTABLE_ASCII = /^[\x21-\x7e]*$/;

/**
 * The Location header for a stored target: byte-exact when the target is printable ASCII (as WordPress's
 * percent-encoded permalinks are); otherwise an IDN host becomes punycode and any other non-ASCII character
 * is UTF-8 percent-encoded, while existing %XX escapes are left exactly as they are (never double-encoded).
 */
export function toLocation(target: string): string {
  if (PRINTABLE_ASCII.test(target)) return target;
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s.exec(target);
  if (!m) return encodeNonAscii(target);
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  const host = PRINTABLE_ASCII.test(authority) ? authority : new URL(target).host;
  return `${scheme}${host}${encodeNonAscii(rest)}`;
}

function encodeNonAscii(value: string): string {
  return value.replace(/[^\x21-\x7e]/gu, (ch) => encodeURIComponent(ch));
}
