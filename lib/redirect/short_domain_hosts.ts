// Which short domain a request's Host names (ADR 0078): picked once per request from a small Map, before any
// lookup, so an LRU hit on any domain is one `get` on that domain's own LRU by the bare code. The Host header only
// ever selects among configured domains: no URL is built from it (short URLs come from configuration).

import { DEFAULT_DOMAIN, type ShortDomains, shortBaseUrlOf, storedDomainOf } from '../shared/link_key.ts';
import type { ServingRecord } from './serving_record.ts';

/** One short domain as the answerer serves it. */
export interface ServedDomain {
  /** Its stored domain: '' for the default, else its host name. */
  readonly stored: string;
  /** What comes before a code in its links' keys: '' on the default domain, `{domain}/` on another. */
  readonly keyPrefix: string;
  /** Its public base URL (configuration's, never the request's Host). */
  readonly baseUrl: string;
  /** Its LRU's answer for a bare code (the resolver's peekerFor); absent: the resolver keeps no LRU to ask. */
  readonly peek: ((code: string) => ServingRecord | null | undefined) | undefined;
}

/** Host headers spelled otherwise than a domain's own name (a port, capitals, a trailing dot) remembered at most. */
const SPELLINGS_MAX = 256;

export interface ShortDomainHosts {
  /** True when every request is the default domain's (one domain, unknown hosts answered as the default). */
  readonly single: boolean;
  readonly home: ServedDomain;
  /** The domain a Host header names; the default for an unknown one when so configured, else null (a 404). */
  select(host: string | undefined): ServedDomain | null;
}

/**
 * The host name a Host header names: lower-cased, without its port and a trailing dot. IPv6 literals keep their
 * brackets (they never name a short domain).
 */
export function hostNameOf(host: string): string {
  const h = host.toLowerCase();
  const colon = h.lastIndexOf(':');
  let name = colon > h.lastIndexOf(']') ? h.slice(0, colon) : h;
  if (name.endsWith('.')) name = name.slice(0, -1);
  return name;
}

/** Builds the selection for a deployment's short domains; `peekerFor` is the resolver's. */
export function createShortDomainHosts(
  config: ShortDomains & { unknownHost: 'default' | 'not_found' },
  peekerFor: ((domain: string) => (code: string) => ServingRecord | null | undefined) | undefined,
): ShortDomainHosts {
  const served = (name: string): ServedDomain => {
    const stored = storedDomainOf(config, name) ?? DEFAULT_DOMAIN;
    return {
      stored,
      keyPrefix: stored === DEFAULT_DOMAIN ? '' : `${stored}/`,
      baseUrl: shortBaseUrlOf(config, stored),
      peek: peekerFor?.(stored),
    };
  };
  const byName = new Map(config.shortDomains.map((name): [string, ServedDomain] => [name, served(name)]));
  const home = byName.get(config.shortDomains[0]!)!;
  const unknown = config.unknownHost === 'default' ? home : null;
  // Host headers exactly as they arrived, for the domains they name: most requests spell the host the same way.
  const spellings = new Map<string, ServedDomain>(byName);
  return {
    single: config.shortDomains.length === 1 && unknown === home,
    home,
    select(host) {
      if (host === undefined) return unknown;
      const known = spellings.get(host);
      if (known !== undefined) return known;
      const domain = byName.get(hostNameOf(host));
      if (domain === undefined) return unknown;
      if (spellings.size < SPELLINGS_MAX) spellings.set(host, domain);
      return domain;
    },
  };
}
