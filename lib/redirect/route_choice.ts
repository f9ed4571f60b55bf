// Which of a link's routing rules a request matches (docs/adr/0080-routing-rules-on-the-link-row.md): pure
// functions of the rules and the three request headers they can read. The redirect policy turns the choice into
// an answer (redirect_policy.ts, decideRoutedRedirect); the answerer memoises that answer per (record, variant).

import type { RoutingDevice, RoutingRule } from '../stores/link_rows.ts';

/** What a request is, as far as a link's rules can tell: '' where a part is unknown or not needed. */
export interface RouteVariant {
  /** The primary tag of the reader's most preferred language, lower case (`ar` for `ar-EG;q=0.9`). */
  language: string;
  device: RoutingDevice | '';
  /** ISO 3166-1 alpha-2, upper case, from the trusted CDN header. */
  country: string;
}

/** Which parts of a request a rule list reads: bit flags, so a record's needs are one small number. */
export const NEEDS_LANGUAGE = 1;
export const NEEDS_DEVICE = 2;
export const NEEDS_COUNTRY = 4;

/** The headers `rules` read (NEEDS_* flags). */
export function routeNeeds(rules: readonly RoutingRule[]): number {
  let needs = 0;
  for (const rule of rules) {
    needs |=
      rule.kind === 'language' ? NEEDS_LANGUAGE : rule.kind === 'device' ? NEEDS_DEVICE : NEEDS_COUNTRY;
  }
  return needs;
}

/**
 * The `Vary` value for answers chosen by rules with these needs: the request headers the choice read. Without a
 * trusted country header a country rule can never match, so nothing varies by country.
 */
export function varyFor(needs: number, countryHeader: string | undefined): string {
  const names: string[] = [];
  if (needs & NEEDS_LANGUAGE) names.push('Accept-Language');
  if (needs & NEEDS_DEVICE) names.push('User-Agent');
  if (needs & NEEDS_COUNTRY && countryHeader) names.push(countryHeader);
  return names.join(', ');
}

/** An Accept-Language value longer than this is read up to here (bounded work per request). */
const ACCEPT_LANGUAGE_MAX_LENGTH = 256;

/**
 * The primary language tag of the highest-q entry of an Accept-Language value, lower case; the first one wins a
 * tie (RFC 9110 §12.5.4: order carries no weight, but browsers list in preference order). `*`, q=0 and entries
 * that are no language tag are skipped; '' when nothing is left.
 */
export function preferredLanguage(header: string | undefined): string {
  if (!header) return '';
  const value =
    header.length > ACCEPT_LANGUAGE_MAX_LENGTH ? header.slice(0, ACCEPT_LANGUAGE_MAX_LENGTH) : header;
  let best = '';
  let bestQ = 0;
  for (const entry of value.split(',')) {
    const semi = entry.indexOf(';');
    const range = (semi < 0 ? entry : entry.slice(0, semi)).trim();
    const dash = range.indexOf('-');
    const primary = (dash < 0 ? range : range.slice(0, dash)).toLowerCase();
    if (!/^[a-z]{2,3}$/.test(primary)) continue;
    const q = semi < 0 ? 1 : qualityOf(entry.slice(semi + 1));
    if (q > bestQ) {
      best = primary;
      bestQ = q;
      if (q === 1) break;
    }
  }
  return best;
}

/** The q parameter of an Accept-Language entry's parameters (1 when absent; 0 when malformed). */
function qualityOf(params: string): number {
  const m = /(?:^|;)\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*(?:;|$)/i.exec(params);
  if (!m) return /(?:^|;)\s*q\s*=/i.test(params) ? 0 : 1;
  const q = Number(m[1]);
  return q > 1 ? 0 : q;
}

/** A User-Agent longer than this is read up to here (the platform is always near the start). */
const USER_AGENT_MAX_LENGTH = 512;
/**
 * The last agent classified and its device: consecutive requests mostly come from the same browser build, and
 * comparing two strings is cheaper than searching one again (the click classifier does the same).
 */
let lastAgent = '';
let lastDevice: RoutingDevice = 'desktop';

/**
 * The reader's device from the User-Agent: `android` when it names Android; `ios` for iPhone, iPad and iPod,
 * and for an iPad's in-app browser that asks for the desktop site (a Macintosh agent with a `Mobile/` build);
 * everything else, including no agent at all, is `desktop`. An iPad's Safari asking for desktop sites sends the
 * Mac's agent unchanged and is a desktop here: no header tells them apart.
 */
export function deviceOf(userAgent: string | undefined): RoutingDevice {
  if (!userAgent) return 'desktop';
  const ua = userAgent.length > USER_AGENT_MAX_LENGTH ? userAgent.slice(0, USER_AGENT_MAX_LENGTH) : userAgent;
  if (ua === lastAgent) return lastDevice;
  let device: RoutingDevice = 'desktop';
  if (ua.includes('Android')) device = 'android';
  else if (ua.includes('iPhone') || ua.includes('iPad') || ua.includes('iPod')) device = 'ios';
  else if (ua.includes('Macintosh') && ua.includes(' Mobile/')) device = 'ios';
  lastAgent = ua;
  lastDevice = device;
  return device;
}

/** An ISO 3166-1 alpha-2 code from the trusted country header, upper case; '' for anything else (XX, T1, none). */
export function routeCountryOf(value: string | undefined): string {
  if (value === undefined || value.length !== 2) return '';
  const upper = value.toUpperCase();
  return /^[A-Z]{2}$/.test(upper) && upper !== 'XX' ? upper : '';
}

/** The parts of a request that rules with `needs` read, each '' when not needed. */
export function readRouteVariant(
  needs: number,
  request: { header(name: string): string | undefined },
  countryHeader: string | undefined,
): RouteVariant {
  return {
    language: needs & NEEDS_LANGUAGE ? preferredLanguage(request.header('accept-language')) : '',
    device: needs & NEEDS_DEVICE ? deviceOf(request.header('user-agent')) : '',
    country: needs & NEEDS_COUNTRY && countryHeader ? routeCountryOf(request.header(countryHeader)) : '',
  };
}

/** A variant as a Map key: the three parts, none of which can contain `|`. */
export function routeVariantKey(variant: RouteVariant): string {
  return `${variant.language}|${variant.device}|${variant.country}`;
}

/** The index of the first rule the variant matches, or -1: the link's own target (first match wins). */
export function chooseRoute(rules: readonly RoutingRule[], variant: RouteVariant): number {
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    const value =
      rule.kind === 'language' ? variant.language : rule.kind === 'device' ? variant.device : variant.country;
    if (value !== '' && rule.values.includes(value)) return i;
  }
  return -1;
}
