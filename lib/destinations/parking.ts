// Whether a destination's domain now serves a domain-parking page: the page is on a known parking host, the
// registrable domain is delegated to a parking service's name servers, or the page read says so.

/** Hosts of domain-parking and domain-sale services (a redirect to one of them, or to a subdomain). */
export const PARKING_HOSTS: readonly string[] = [
  'sedoparking.com',
  'sedo.com',
  'parkingcrew.net',
  'bodis.com',
  'above.com',
  'parklogic.com',
  'dan.com',
  'afternic.com',
  'hugedomains.com',
  'undeveloped.com',
  'domainmarket.com',
  'uniregistry.com',
  'parked.com',
  'voodoo.com',
  'skenzo.com',
  'domainsponsor.com',
];

/** Name servers of parking services, by domain (ns1.sedoparking.com, ns2.parkingcrew.net, …). */
export const PARKING_NAME_SERVERS: readonly string[] = [
  'sedoparking.com',
  'parkingcrew.net',
  'bodis.com',
  'above.com',
  'parklogic.com',
  'dan.com',
  'afternic.com',
  'hugedomains.com',
  'uniregistrymarket.link',
  'park.do',
  'domainparkingserver.net',
  'parked.com',
  'voodoo.com',
  'ztomy.com',
];

// Phrases parking and for-sale pages carry; matched on the small part of a page a check reads.
const PARKING_TEXT =
  /\b(this domain (name )?(is|may be) for sale|buy this domain|domain (is )?parked|parked (free|domain)|domain parking|the domain [^<]{0,60} (is|may be) for sale|this domain has expired)\b/i;

const matchesSuffix = (host: string, suffixes: readonly string[]) =>
  suffixes.some((s) => host === s || host.endsWith(`.${s}`));

export function isParkingHost(host: string): boolean {
  return matchesSuffix(host.toLowerCase().replace(/\.$/, ''), PARKING_HOSTS);
}

export function hasParkingNameServer(nameServers: readonly string[]): boolean {
  return nameServers.some((ns) => matchesSuffix(ns.toLowerCase().replace(/\.$/, ''), PARKING_NAME_SERVERS));
}

export function looksLikeParkingPage(body: string): boolean {
  return PARKING_TEXT.test(body);
}

// Second-level labels under which registrations happen one level deeper (example.co.uk, example.com.au). Without
// the public suffix list this is an approximation; a miss only means the name servers of a parent are asked.
const SECOND_LEVEL = new Set(['co', 'com', 'net', 'org', 'gov', 'ac', 'edu', 'or', 'ne', 'go', 'gv', 'nic']);

/** The registrable domain of a host (its name servers say whether it is parked); null for an IP literal. */
export function getRegistrableDomain(host: string): string | null {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (/^[\d.]+$/.test(name) || name.includes(':')) return null;
  const labels = name.split('.');
  if (labels.length < 2) return null;
  const tld = labels.at(-1)!;
  const second = labels.at(-2)!;
  const take = tld.length === 2 && SECOND_LEVEL.has(second) && labels.length >= 3 ? 3 : 2;
  return labels.slice(-take).join('.');
}
