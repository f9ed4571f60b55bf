import { canonicalizeHost } from '../targets/canonical_url.ts';

/** The lower-case (punycode) host of a destination URL, or null when it has none. */
export function destinationHost(url: string): string | null {
  try {
    const host = new URL(url).hostname.toLowerCase();
    return host === '' ? null : host;
  } catch {
    return null;
  }
}

/**
 * Whether a host is one of the newsroom's own (SAFETY_TRUSTED_HOSTS, and their subdomains): its pages are not
 * sent to the Internet Archive, and a `moved` destination there is a retarget to propose.
 */
export function createOwnHostTest(ownHosts: readonly string[]): (host: string) => boolean {
  const canonical = ownHosts.flatMap((h) => canonicalizeHost(h) ?? []);
  return (host) => canonical.some((own) => host === own || host.endsWith(`.${own}`));
}
