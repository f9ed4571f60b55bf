/**
 * One short-link click as a GA4 Measurement Protocol event, and the protocol's limits we keep to ourselves:
 * Google's collect endpoint answers 2xx to anything and silently drops what breaks a rule (VENDORS.md §3), so
 * nothing invalid may leave.
 */

/** Our event name: custom, not reserved, letters and underscores. */
export const GA4_EVENT_NAME = 'short_link_click';
export const GA4_MAX_EVENTS_PER_REQUEST = 25;
export const GA4_MAX_PARAMS_PER_EVENT = 25;
export const GA4_MAX_NAME_LENGTH = 40;
export const GA4_MAX_PARAM_VALUE_LENGTH = 100;
/** Events may be backdated up to 72 hours; older ones are dropped by Google. */
export const GA4_MAX_EVENT_AGE_MS = 72 * 3_600_000;

/** What the click pipeline hands over: nothing that identifies the reader (no IP, no user agent). */
export interface ForwardedClick {
  code: string;
  /** Only `human` and `qr` are forwarded; other kinds are ignored. */
  kind: string;
  /** The destination the reader was sent to; only its host and utm_campaign/source/medium are used. */
  destination: string;
  /** Two-letter country from the trusted CDN header, or ''. */
  country: string;
  /** Referrer host already reduced by the click pipeline, or ''. */
  referrerHost: string;
  /** When the click happened (epoch ms). */
  atMs: number;
}

export interface Ga4Event {
  name: string;
  params: Record<string, string>;
  timestamp_micros: number;
}

const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
const RESERVED_PARAM_PREFIXES = ['_', 'firebase_', 'ga_', 'google_', 'gtag.'];
const RESERVED_EVENT_NAMES = new Set([
  'ad_activeview',
  'ad_click',
  'ad_exposure',
  'ad_impression',
  'ad_query',
  'ad_reward',
  'adunit_exposure',
  'app_background',
  'app_clear_data',
  'app_exception',
  'app_remove',
  'app_store_refund',
  'app_store_subscription_cancel',
  'app_store_subscription_convert',
  'app_store_subscription_renew',
  'app_update',
  'app_upgrade',
  'click',
  'error',
  'file_download',
  'first_open',
  'first_visit',
  'form_start',
  'form_submit',
  'in_app_purchase',
  'notification_dismiss',
  'notification_foreground',
  'notification_open',
  'notification_receive',
  'os_update',
  'page_view',
  'screen_view',
  'scroll',
  'session_start',
  'user_engagement',
  'view_search_results',
]);
const COUNTRY = /^[A-Z]{2}$/;
const HOST = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/;

/** A value cut to the protocol's 100 characters (without splitting a surrogate pair). */
function toParamValue(value: string): string {
  if (value.length <= GA4_MAX_PARAM_VALUE_LENGTH) return value;
  const cut = value.slice(0, GA4_MAX_PARAM_VALUE_LENGTH);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/**
 * The event for one click: `link_code`, `link_host` (destination host), `campaign` / `source` / `medium` when the
 * destination carries utm_* values, `kind` (human | qr), `country` and `referrer_host` when known; the click's own
 * time as `timestamp_micros`. Only these fields are read, so nothing else about the reader can leak.
 */
export function toGa4Event(click: ForwardedClick, eventName = GA4_EVENT_NAME): Ga4Event {
  const params: Record<string, string> = { link_code: toParamValue(click.code), kind: click.kind };
  let url: URL | null = null;
  try {
    url = new URL(click.destination);
  } catch {}
  if (url?.hostname) params.link_host = toParamValue(url.hostname.toLowerCase());
  for (const [param, key] of [
    ['campaign', 'utm_campaign'],
    ['source', 'utm_source'],
    ['medium', 'utm_medium'],
  ] as const) {
    const value = url?.searchParams.get(key)?.trim();
    if (value) params[param] = toParamValue(value);
  }
  if (COUNTRY.test(click.country)) params.country = click.country;
  if (
    click.referrerHost &&
    click.referrerHost.length <= GA4_MAX_PARAM_VALUE_LENGTH &&
    HOST.test(click.referrerHost)
  ) {
    params.referrer_host = click.referrerHost;
  }
  return { name: eventName, params, timestamp_micros: Math.trunc(click.atMs) * 1000 };
}

/** A problem with a name under the protocol's rules, or null. */
export function checkGa4Name(name: string, what: 'event' | 'param'): string | null {
  if (name.length === 0 || name.length > GA4_MAX_NAME_LENGTH)
    return `${what} name must be 1-40 characters: ${name}`;
  if (!NAME.test(name))
    return `${what} name must start with a letter and hold only letters, digits and _: ${name}`;
  if (what === 'event' && (RESERVED_EVENT_NAMES.has(name) || name.startsWith('video_')))
    return `event name is reserved: ${name}`;
  if (RESERVED_PARAM_PREFIXES.some((p) => name.startsWith(p)))
    return `${what} name has a reserved prefix: ${name}`;
  return null;
}

/** Why an event would be dropped by GA4 (names, counts, lengths, age), or null when it is fine at `nowMs`. */
export function checkGa4Event(event: Ga4Event, nowMs: number): string | null {
  const nameProblem = checkGa4Name(event.name, 'event');
  if (nameProblem) return nameProblem;
  const names = Object.keys(event.params);
  if (names.length > GA4_MAX_PARAMS_PER_EVENT) return `more than ${GA4_MAX_PARAMS_PER_EVENT} params`;
  for (const name of names) {
    const problem = checkGa4Name(name, 'param');
    if (problem) return problem;
    const value = event.params[name]!;
    if (typeof value !== 'string' || value.length > GA4_MAX_PARAM_VALUE_LENGTH)
      return `param ${name} is not a string of at most 100 characters`;
  }
  const ageMs = nowMs - event.timestamp_micros / 1000;
  if (!Number.isSafeInteger(event.timestamp_micros) || ageMs > GA4_MAX_EVENT_AGE_MS || ageMs < -60_000) {
    return 'timestamp_micros is more than 72 hours old or in the future';
  }
  return null;
}
