/**
 * Which CDN answers for a purge: a deployment that serves redirects with a shared-cache policy (`public,
 * s-maxage=N`) must purge a link's paths at the edge whenever the link changes (edit, expiry, block, unpublish).
 */
export type CdnPurgerName = 'webhook' | 'cloudflare' | 'cloudfront';

/** Items the CDN did not purge, and why; `retryable` ones may succeed later (after `retryAfterMs` when set). */
export interface PurgeFailure {
  /** The paths, prefixes or tags concerned, exactly as the caller gave them. */
  items: string[];
  /** Human-readable cause, without credentials (for logs and operators). */
  reason: string;
  /** True for rate limits, 5xx, timeouts, connection failures and "too many in progress". */
  retryable: boolean;
  /** The CDN's or our suggested wait before trying these again. */
  retryAfterMs?: number;
  /** The last HTTP status, when there was an answer. */
  status?: number;
  /** The vendor's error code when it gave one (Cloudflare `errors[].code`, CloudFront `Error/Code`). */
  code?: string;
}

/**
 * What a purge did. Never thrown away: every item given is either in `purged` or in exactly one `failed` entry,
 * so the caller can retry the retryable ones later (a Temporal activity retry, a reconcile pass) or alert.
 */
export interface PurgeResult {
  /** Items the CDN accepted, in the order given (duplicates removed). */
  purged: string[];
  failed: PurgeFailure[];
  /** What the CDN returned to identify the purge (Cloudflare purge id, CloudFront invalidation ids). */
  references: string[];
  /** HTTP requests made, retries included. */
  requests: number;
}

/**
 * A CDN purge adapter. Every method resolves (never rejects for a CDN failure): batching, bounded retries with
 * backoff and the final outcome per item are in the result. Paths are absolute request paths as the CDN sees
 * them, already URL-encoded (`/9Kx2a`, `/9Kx2a+`); anything else is reported as a non-retryable failure.
 */
export interface CdnPurger {
  readonly name: CdnPurgerName;
  /** Purges exact paths on the short host. */
  purgePaths(paths: string[]): Promise<PurgeResult>;
  /** Purges everything under each path prefix (Cloudflare `prefixes`, CloudFront `/prefix*` wildcards). */
  purgePrefixes?(prefixes: string[]): Promise<PurgeResult>;
  /** Purges by cache tag (Cloudflare `tags`; CloudFront `#tag` items on distributions with cache tags). */
  purgeTags?(tags: string[]): Promise<PurgeResult>;
}

/** Counters a purger reports to; the caller maps them to its metrics (Prometheus, logs). All optional. */
export interface CdnPurgeMetrics {
  /** One HTTP request to the CDN: ok (2xx), retried (transient failure, tried again), failed (given up). */
  countRequest?(purger: CdnPurgerName, outcome: 'ok' | 'retried' | 'failed'): void;
  /** Items purged, or given up on by this call (still returned in `failed`). */
  countItems?(purger: CdnPurgerName, outcome: 'purged' | 'failed', n: number): void;
}

/** The part of a pino logger the adapters use (structural, so any pino Logger fits). */
export interface AdapterLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** Bounded retries for transient failures (rate limits, 5xx, timeouts, connection failures). */
export interface PurgeRetryPolicy {
  /** Attempts per request, the first included (default 4). */
  maxAttempts?: number;
  /** First backoff; doubles each retry, with jitter (default 500 ms). */
  baseDelayMs?: number;
  /** Longest wait between attempts, Retry-After included: a longer Retry-After ends the call (default 10 s). */
  maxDelayMs?: number;
}

/** What every purger takes besides its vendor's own settings. */
export interface CommonPurgerOptions {
  /** Per-request deadline (default 10 s); a timeout is retryable. */
  timeoutMs?: number;
  retry?: PurgeRetryPolicy;
  /** A fetch-compatible function (tests, proxies); default the global fetch. */
  fetch?: typeof fetch;
  logger?: AdapterLogger;
  metrics?: CdnPurgeMetrics;
}

/** The paths a link answers on, to purge when it changes: the redirect and its `+` preview page. */
export function toLinkPurgePaths(code: string): string[] {
  const path = `/${encodeURIComponent(code)}`;
  return [path, `${path}+`];
}

/** True when every item given was purged. */
export function isFullyPurged(result: PurgeResult): boolean {
  return result.failed.length === 0;
}
