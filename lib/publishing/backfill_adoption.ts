// Which short URLs a backfilled post may adopt the back-half of: ours, on the short host or the Bitly domain.
import { isPossibleCode } from '../codes/code_rules.ts';

/** The hosts whose back-halves may be adopted, from configuration. */
export function getAdoptableHosts(config: { shortBaseUrl: string; bitly?: { domain: string } | undefined }) {
  const hosts = new Set([new URL(config.shortBaseUrl).host.toLowerCase()]);
  if (config.bitly) hosts.add(config.bitly.domain.toLowerCase());
  return [...hosts];
}

/** The back-half of a short URL on one of our domains that could be one of our codes, or null. */
export function toAdoptableCode(shortUrl: string, hosts: readonly string[]): string | null {
  let url: URL;
  try {
    url = new URL(shortUrl);
  } catch {
    return null;
  }
  if (!hosts.includes(url.host.toLowerCase()) || url.username || url.password) return null;
  const m = /^\/([^/]+)\/?$/.exec(url.pathname);
  if (!m || !isPossibleCode(m[1]!)) return null;
  return m[1]!;
}
