// Which host serves which path, decided once: with one shared host everything is served there; with a separate
// short host (SHORT_BASE_URL and APP_BASE_URL on different hosts) each serves only its own routes. The Hono app
// (routes/app.ts) and the Node fast path (server/node_server.ts) both ask this.

/** Routes only the app host serves when the short host is separate. */
const APP_HOST_PREFIXES = ['/api/', '/ui'];
/** Paths both hosts serve. */
const SHARED_PATHS = ['/', '/healthz', '/livez', '/readyz', '/metrics'];

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

function isAppPath(path: string): boolean {
  return APP_HOST_PREFIXES.some((p) => path === p.replace(/\/$/, '') || path.startsWith(p));
}

/** Builds the routing of a deployment from its two base URLs. */
export function createHostRouting(config: { shortBaseUrl: string; appBaseUrl: string }): HostRouting {
  const shortHost = new URL(config.shortBaseUrl).host.toLowerCase();
  const appHost = new URL(config.appBaseUrl).host.toLowerCase();
  const split = shortHost !== appHost;
  return {
    split,
    shortHost,
    appHost,
    isAppHost: (host) => split && host.toLowerCase() === appHost,
    isShortHost: (host) => split && host.toLowerCase() === shortHost,
    serves(host, path) {
      if (!split) return true;
      const h = host.toLowerCase();
      if (h === shortHost) return !isAppPath(path);
      if (h === appHost) return isAppPath(path) || SHARED_PATHS.includes(path) || path.startsWith('/static/');
      return true;
    },
  };
}
