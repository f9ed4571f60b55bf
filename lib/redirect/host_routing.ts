// Which host serves which path, decided once: with one shared host everything is served there; with a separate
// short host (SHORT_BASE_URL and APP_BASE_URL on different hosts) each serves only its own routes. The Hono app
// (routes/app.ts) and the Node fast path (server/node_server.ts) both ask this.

import { hostNameOf } from './short_domain_hosts.ts';

/**
 * Routes only the app host serves when the short host is separate. `/metrics` is one: the short host faces
 * every reader on the internet and never answers it (it also needs METRICS_TOKEN; routes/health.ts).
 */
const APP_HOST_PREFIXES = ['/api/', '/ui/'];
const APP_HOST_PATHS = ['/api', '/ui', '/metrics'];
/** Paths both hosts serve. */
const SHARED_PATHS = ['/', '/healthz', '/livez', '/readyz'];
/**
 * Served by the app host alone when the hosts are split, whatever else the Host header names (the short host, an
 * address, a name we do not know): the signed WordPress webhooks, which carry bodies of up to 4 MiB and must
 * never be reachable through the host every reader on the internet is sent to.
 */
const APP_HOST_ONLY_PREFIX = '/api/v1/hooks/';

export interface HostRouting {
  /** False when the hosts are one: every path is served. */
  split: boolean;
  shortHost: string;
  appHost: string;
  /** True when `host` (a Host header, any case) is the app host of a split deployment. */
  isAppHost(host: string): boolean;
  /** True when `host` is the short host of a split deployment. */
  isShortHost(host: string): boolean;
  /** Whether this host serves this path (always true with one shared host). */
  serves(host: string, path: string): boolean;
}

// Whole segments only: a code such as `uiStory` or `metricsDaily` is the short host's.
function isAppPath(path: string): boolean {
  return APP_HOST_PATHS.includes(path) || APP_HOST_PREFIXES.some((p) => path.startsWith(p));
}

/**
 * Whether a Host header names a base URL's host however it is spelled: any case, a trailing dot, and — when the
 * base URL has no port of its own — any port. `sho.rt:443` and `SHO.RT.` are the short host `sho.rt`.
 */
function namesHost(host: string, base: URL): boolean {
  if (host === base.host) return true;
  const h = host.toLowerCase();
  const colon = h.lastIndexOf(':');
  const hasPort = colon > h.lastIndexOf(']');
  let name = hasPort ? h.slice(0, colon) : h;
  if (name.endsWith('.')) name = name.slice(0, -1);
  return name === base.hostname && (base.port === '' || (hasPort && h.slice(colon + 1) === base.port));
}

/**
 * Builds the routing of a deployment from its two base URLs; the other short domains (SHORT_DOMAINS after the
 * first, ADR 0078) are short hosts too, on any port.
 */
export function createHostRouting(config: {
  shortBaseUrl: string;
  appBaseUrl: string;
  shortDomains?: readonly string[];
}): HostRouting {
  const short = new URL(config.shortBaseUrl);
  const app = new URL(config.appBaseUrl);
  const shortHost = short.host.toLowerCase();
  const appHost = app.host.toLowerCase();
  const split = shortHost !== appHost;
  const others = new Set((config.shortDomains ?? []).slice(1));
  const isShort = (host: string) =>
    namesHost(host, short) || (others.size > 0 && others.has(hostNameOf(host)));
  const isApp = (host: string) => namesHost(host, app);
  return {
    split,
    shortHost,
    appHost,
    isAppHost: (host) => split && isApp(host),
    isShortHost: (host) => split && isShort(host),
    serves(host, path) {
      if (!split) return true;
      if (path.startsWith(APP_HOST_ONLY_PREFIX)) return isApp(host);
      if (isShort(host)) return !isAppPath(path);
      if (isApp(host)) return isAppPath(path) || SHARED_PATHS.includes(path) || path.startsWith('/static/');
      return true;
    },
  };
}
