import { backoffDelay } from '../shared/backoff.ts';
import type {
  AdapterLogger,
  CdnPurgeMetrics,
  CdnPurgerName,
  PurgeFailure,
  PurgeResult,
  PurgeRetryPolicy,
} from './cdn_purger.ts';

/** What one request for one batch came to, as the vendor adapter reads the answer. */
export type BatchOutcome =
  | { ok: true; reference?: string }
  | {
      ok: false;
      retryable: boolean;
      reason: string;
      status?: number;
      code?: string;
      retryAfterMs?: number;
      /** Every other batch would fail the same way (bad credentials, unknown zone): do not send them. */
      fatal?: boolean;
      /** Retrying within this call cannot help (e.g. CloudFront's in-progress limit): report it at once. */
      noImmediateRetry?: boolean;
    };

/** One request's raw answer, or why there was none. */
export type HttpAttempt =
  | { ok: true; status: number; headers: Headers; text: string }
  | { ok: false; reason: string };

const DEFAULT_MAX_ATTEMPTS = 4;
const DEFAULT_BASE_DELAY_MS = 500;
const DEFAULT_MAX_DELAY_MS = 10_000;

/** Sends one request with a deadline; a network failure or timeout comes back as a reason, never a throw. */
export async function requestOnce(
  fetchFn: typeof fetch,
  url: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<HttpAttempt> {
  try {
    const res = await fetchFn(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    return { ok: true, status: res.status, headers: res.headers, text };
  } catch (error) {
    const name = (error as Error | undefined)?.name;
    if (name === 'TimeoutError' || name === 'AbortError')
      return { ok: false, reason: `timed out after ${timeoutMs} ms` };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      ok: false,
      reason: `request failed: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
    };
  }
}

/** Milliseconds from a Retry-After header (delta seconds or an HTTP date), or undefined when absent or bad. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

/**
 * The usual reading of an HTTP status for a purge: 2xx done; 408, 425, 429 and 5xx transient (with Retry-After
 * when sent); 401/403 fatal (credentials or permissions: every batch would fail); any other 4xx a refusal of
 * this batch that the same request cannot overcome.
 */
export function classifyStatus(
  status: number,
  headers: Headers,
  reason: string,
  nowMs = Date.now(),
): BatchOutcome {
  if (status >= 200 && status < 300) return { ok: true };
  const retryAfterMs = parseRetryAfter(headers.get('Retry-After'), nowMs);
  if (status === 408 || status === 425 || status === 429 || status >= 500) {
    return {
      ok: false,
      retryable: true,
      reason,
      status,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  }
  return { ok: false, retryable: false, reason, status, fatal: status === 401 || status === 403 };
}

/** Removes duplicates and splits items into valid ones and a failure entry per invalid one. */
export function partitionItems(
  items: string[],
  validate: (item: string) => string | null,
): { valid: string[]; invalid: PurgeFailure[] } {
  const valid: string[] = [];
  const invalid: PurgeFailure[] = [];
  for (const item of new Set(items)) {
    const problem = typeof item === 'string' ? validate(item) : 'not a string';
    if (problem) invalid.push({ items: [item], reason: problem, retryable: false });
    else valid.push(item);
  }
  return { valid, invalid };
}

/**
 * Sends `items` in batches of `batchSize`, one batch after another, retrying each transient failure with
 * exponential backoff (jittered; honouring Retry-After up to `maxDelayMs`) at most `maxAttempts` times. When a
 * batch finally fails transiently or fatally, the batches not yet sent are reported failed with it rather than
 * sent into the same wall; a batch refused for its content does not stop the others.
 */
export async function runBatches(options: {
  purger: CdnPurgerName;
  items: string[];
  invalid?: PurgeFailure[];
  batchSize: number;
  send: (batch: string[]) => Promise<BatchOutcome>;
  retry?: PurgeRetryPolicy;
  metrics?: CdnPurgeMetrics;
  logger?: AdapterLogger;
  sleep?: (ms: number) => Promise<void>;
}): Promise<PurgeResult> {
  const maxAttempts = Math.max(1, options.retry?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
  const baseDelayMs = options.retry?.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
  const maxDelayMs = options.retry?.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const { purger, metrics } = options;
  const result: PurgeResult = {
    purged: [],
    failed: [...(options.invalid ?? [])],
    references: [],
    requests: 0,
  };

  const batches: string[][] = [];
  for (let i = 0; i < options.items.length; i += options.batchSize) {
    batches.push(options.items.slice(i, i + options.batchSize));
  }
  for (let b = 0; b < batches.length; b++) {
    const batch = batches[b]!;
    for (let attempt = 1; ; attempt++) {
      result.requests++;
      let outcome: BatchOutcome;
      try {
        outcome = await options.send(batch);
      } catch (error) {
        // A bug or a runtime failure must not lose the batch either: report it like a transient failure.
        outcome = {
          ok: false,
          retryable: true,
          reason: `purge request could not be made: ${(error as Error).message}`,
        };
      }
      if (outcome.ok) {
        metrics?.countRequest?.(purger, 'ok');
        result.purged.push(...batch);
        if (outcome.reference) result.references.push(outcome.reference);
        break;
      }
      const retryAfterMs = outcome.retryAfterMs ?? 0;
      const retryNow =
        outcome.retryable && !outcome.noImmediateRetry && attempt < maxAttempts && retryAfterMs <= maxDelayMs;
      if (retryNow) {
        metrics?.countRequest?.(purger, 'retried');
        await sleep(
          backoffDelay({
            attempt,
            baseMs: baseDelayMs,
            maxMs: maxDelayMs,
            jitter: { min: 0.5, range: 0.5 },
            retryAfterMs,
          }),
        );
        continue;
      }
      metrics?.countRequest?.(purger, 'failed');
      const { ok: _ok, fatal, noImmediateRetry: _n, ...failure } = outcome;
      result.failed.push({ items: batch, ...failure });
      options.logger?.warn(
        { purger, items: batch.length, status: outcome.status, code: outcome.code, attempts: attempt },
        `CDN purge failed: ${outcome.reason}`,
      );
      const rest = batches.slice(b + 1).flat();
      if ((outcome.retryable || fatal) && rest.length > 0) {
        result.failed.push({
          items: rest,
          ...failure,
          reason: `not sent after an earlier batch failed: ${outcome.reason}`,
        });
        b = batches.length;
      }
      break;
    }
  }
  const failedItems = result.failed.reduce((n, f) => n + f.items.length, 0);
  if (result.purged.length > 0) metrics?.countItems?.(purger, 'purged', result.purged.length);
  if (failedItems > 0) metrics?.countItems?.(purger, 'failed', failedItems);
  return result;
}

/**
 * A problem with a purge path, or null when it is one: absolute, URL-encoded printable ASCII, without spaces, query,
 * fragment or `*` (CDNs read a trailing `*` as a wildcard: prefixes go through purgePrefixes).
 */
export function checkPurgePath(path: string): string | null {
  if (!path.startsWith('/')) return `not an absolute path: ${JSON.stringify(path.slice(0, 100))}`;
  if (path.includes('*'))
    return `path must not contain '*' (use purgePrefixes): ${JSON.stringify(path.slice(0, 100))}`;
  if (path.length > 2048) return `path longer than 2048 characters (${path.slice(0, 40)}…)`;
  if (!/^\/[\x21-\x7e]*$/.test(path))
    return `path must be URL-encoded printable ASCII: ${JSON.stringify(path.slice(0, 100))}`;
  if (/[?#]/.test(path))
    return `path must not carry a query or fragment: ${JSON.stringify(path.slice(0, 100))}`;
  return null;
}

/** The absolute URL of a path on the short host (`https://sho.rt` + `/9Kx2a`). */
export function toAbsoluteUrl(shortBaseUrl: string, path: string): string {
  return `${shortBaseUrl.replace(/\/+$/, '')}${path}`;
}

/** A problem with a cache tag, or null: 1–1024 printable ASCII characters without commas or spaces. */
export function checkTag(tag: string): string | null {
  if (!/^[\x21-\x2b\x2d-\x7e]{1,1024}$/.test(tag)) {
    return `cache tag must be 1-1024 printable ASCII characters without spaces or commas: ${JSON.stringify(tag.slice(0, 100))}`;
  }
  return null;
}

/** Throws a configuration error naming the option, at creation time (never during a purge). */
export function requireOption(ok: boolean, message: string): void {
  if (!ok) throw new Error(`CDN purge configuration: ${message}`);
}

/** True for an absolute http(s) URL. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
