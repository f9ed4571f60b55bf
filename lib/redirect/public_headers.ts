// The security headers of what the short host answers readers: redirects, status pages, the warn interstitial,
// the preview and the report form's thank-you page (docs/adr/0017-hostile-input-and-abuse.md). The UI has its
// own, stricter set (routes/middleware/ui_security_headers.ts).

/**
 * Referrer-Policy of a redirect. A redirect's policy replaces the one the request started with for the next hop,
 * so it decides what the destination learns of the page the reader came from. `strict-origin-when-cross-origin`
 * (the browsers' own default) still tells the newsroom's analytics which site sent the reader (an origin such as
 * https://t.co/), never the path and query of that page, and nothing at all on an https → http downgrade;
 * `unsafe-url` sent both, `no-referrer` would make every short-link visit look like direct traffic.
 */
export const REDIRECT_REFERRER_POLICY = 'strict-origin-when-cross-origin';

/** HSTS for a host served over https: a year, subdomains included (as the UI sends it). */
export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains';

/** CSP of the short host's HTML pages: our stylesheet, forms posting to us, and never inside a frame. */
export const PUBLIC_PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * The headers every HTML page of the short host carries besides its Content-Type and Cache-Control: a strict
 * CSP that also forbids framing (and X-Frame-Options for browsers that predate frame-ancestors), no MIME
 * sniffing, and HSTS when the short host is served over https.
 */
export function publicPageHeaders(https: boolean): Record<string, string> {
  return {
    'Content-Security-Policy': PUBLIC_PAGE_CSP,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    ...(https ? { 'Strict-Transport-Security': STRICT_TRANSPORT_SECURITY } : {}),
  };
}

/** True when `baseUrl` (SHORT_BASE_URL or APP_BASE_URL) is served over https, so HSTS applies. */
export function isHttpsBase(baseUrl: string): boolean {
  return baseUrl.startsWith('https:');
}
