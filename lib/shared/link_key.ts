// A link's key: the one string every copy of a link is stored and looked up under (links.code, the serving store,
// the LRU's flights, the invalidation bus, click counts, vendor rows, workflow IDs). On the default short domain
// it is the code itself, so everything made before several domains existed keeps its key; on another domain it is
// `{domain}/{code}`, the short URL without its scheme. A code never holds `/` (lib/codes/code_rules.ts), so the
// two never meet and one unique key on links.code is the unique key on (domain, code) (ADR 0078).

/** The stored domain of the default short domain's links (links.domain, wordpress_sites.domain). */
export const DEFAULT_DOMAIN = '';

/** The key of `code` on `domain` (DEFAULT_DOMAIN or '' for the default short domain). */
export function linkKey(domain: string, code: string): string {
  return domain === DEFAULT_DOMAIN ? code : `${domain}/${code}`;
}

/** Where the code of a key starts (0 on the default domain). */
function codeStart(key: string): number {
  return key.lastIndexOf('/') + 1;
}

/** The stored domain of a key: DEFAULT_DOMAIN ('') for the default short domain, else its host name. */
export function keyDomain(key: string): string {
  const start = codeStart(key);
  return start === 0 ? DEFAULT_DOMAIN : key.slice(0, start - 1);
}

/** The code of a key, as a reader types it after the short domain. */
export function keyCode(key: string): string {
  const start = codeStart(key);
  return start === 0 ? key : key.slice(start);
}

/** The short domains of a deployment as the key functions need them (Config's shortDomains and bases). */
export interface ShortDomains {
  shortBaseUrl: string;
  /** Lower-case host names, the default first. */
  shortDomains: readonly string[];
}

/**
 * The stored domain of a host name of the deployment (lower-case, no port): DEFAULT_DOMAIN for the first of
 * shortDomains, the name itself for another, undefined for a name that is not one of them.
 */
export function storedDomainOf(config: ShortDomains, host: string): string | undefined {
  const index = config.shortDomains.indexOf(host);
  if (index < 0) return undefined;
  return index === 0 ? DEFAULT_DOMAIN : host;
}

/** The host name of a stored domain: the default short domain's for DEFAULT_DOMAIN. */
export function domainNameOf(config: ShortDomains, stored: string): string {
  return stored === DEFAULT_DOMAIN ? config.shortDomains[0]! : stored;
}

/**
 * The public base URL of a stored domain, without a trailing slash: SHORT_BASE_URL for the default, else the same
 * scheme and port on the domain's host. Built from configuration only, never from a request's Host header.
 */
export function shortBaseUrlOf(config: Pick<ShortDomains, 'shortBaseUrl'>, stored: string): string {
  if (stored === DEFAULT_DOMAIN) return config.shortBaseUrl;
  const url = new URL(config.shortBaseUrl);
  url.hostname = stored;
  return url.origin;
}

/** The short URL of a link's key. */
export function shortUrlOfKey(config: Pick<ShortDomains, 'shortBaseUrl'>, key: string): string {
  return `${shortBaseUrlOf(config, keyDomain(key))}/${keyCode(key)}`;
}

/**
 * The stored domain a caller names (an API field, a form's chooser, a WordPress site's mapping): absent, or the
 * default's host name, is DEFAULT_DOMAIN; a configured domain is itself; anything else is undefined (refused).
 */
export function storedDomainFromInput(config: ShortDomains, input: string | undefined): string | undefined {
  if (input === undefined || input === '') return DEFAULT_DOMAIN;
  return storedDomainOf(config, input.trim().toLowerCase());
}

/** Every configured short domain by its stored name, the default ('') first: SHORT_DOMAINS as keys name them. */
export function storedShortDomains(config: Pick<ShortDomains, 'shortDomains'>): string[] {
  return config.shortDomains.map((name, i) => (i === 0 ? DEFAULT_DOMAIN : name));
}
