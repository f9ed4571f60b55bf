// Bitly's v4 API as one call: the request (token, deadline, `maxConcurrent` at once) and its answer, or the
// ProviderError that says what the sync workflow should do about it.
import type { Logger } from '../shared/logger.ts';
import { ProviderError } from './short_link_provider.ts';

/** Where and as whom to call Bitly (config.bitly). */
export interface BitlyConfig {
  token: string;
  /** The branded short domain (BSD), e.g. `sho.rt`. */
  domain: string;
  groupGuid: string;
  /** Requests go to `<apiBaseUrl>/v4/...`. */
  apiBaseUrl: string;
}

export interface BitlyOptions {
  /** Per-request deadline; a timeout is retryable (the create is idempotent on our side, see syncToBitly). */
  timeoutMs?: number;
  /** Bitly allows at most 5 concurrent connections per IP (VENDORS.md 1.7). */
  maxConcurrent?: number;
  /** Bitly sends no Retry-After: how long to wait after a per-minute/per-hour rate limit. */
  rateLimitRetryMs?: number;
  /** How long to wait after a monthly quota is used up. */
  quotaRetryMs?: number;
  logger?: Logger;
}

// Bitly's error `message` codes that mean "wait", by how long (VENDORS.md 1.6).
const RATE_LIMIT_CODES = new Set(['RATE_LIMIT_EXCEEDED']);
const QUOTA_CODES = new Set([
  'API_USAGE_LIMIT_EXCEEDED',
  'MONTHLY_BSD_ENCODE_LIMIT_REACHED',
  'BRANDED_LINK_MONTHLY_LIMIT_EXCEEDED',
  'MONTHLY_ENCODE_LIMIT_REACHED',
  'KEYWORD_OVERRIDES_LIMIT_EXCEEDED',
  'LIMIT_EXCEEDED_DESTINATION_OVERRIDES',
]);

/** A small counting semaphore: at most `max` calls in flight. */
function createLimiter(max: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

/** What every Bitly call shares: the one way to call the API, and for whom. */
export interface BitlyClient {
  /** `method` on `<apiBaseUrl>/v4<path>`: the parsed JSON answer, or a ProviderError (toProviderError). */
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** The branded short domain, lower case. */
  readonly domain: string;
  readonly groupGuid: string;
  readonly logger: Logger | undefined;
}

/**
 * Decides how a call to Bitly is made and what a failed one means: at most `maxConcurrent` in flight, each within
 * `timeoutMs`; a network failure, a timeout or an answer that is not JSON is `unavailable` (retryable), any
 * other failure is mapped by toProviderError.
 */
export function createBitlyClient(config: BitlyConfig, options: BitlyOptions = {}): BitlyClient {
  const base = `${config.apiBaseUrl.replace(/\/+$/, '')}/v4`;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const waits = {
    rateLimitRetryMs: options.rateLimitRetryMs ?? 60_000,
    quotaRetryMs: options.quotaRetryMs ?? 3_600_000,
  };
  const limit = createLimiter(options.maxConcurrent ?? 5);

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return limit(async () => {
      let res: Response;
      try {
        res = await fetch(`${base}${path}`, {
          method,
          headers: {
            Authorization: `Bearer ${config.token}`,
            Accept: 'application/json',
            ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
        throw new ProviderError(
          'unavailable',
          timedOut
            ? `Bitly ${method} ${path} timed out after ${timeoutMs} ms`
            : `Bitly ${method} ${path} failed: ${(error as Error).message}`,
        );
      }
      let text: string;
      try {
        text = await res.text();
      } catch (error) {
        throw new ProviderError('unavailable', `Bitly ${method} ${path}: ${(error as Error).message}`);
      }
      const bsdError = res.headers.get('X-Bsd-Error');
      if (bsdError)
        options.logger?.warn({ path, bsdError }, 'Bitly reports a problem with the branded domain');
      if (res.ok) {
        try {
          return (text ? JSON.parse(text) : {}) as T;
        } catch {
          throw new ProviderError(
            'unavailable',
            `Bitly ${method} ${path} answered ${res.status} with non-JSON`,
          );
        }
      }
      throw toProviderError(method, path, res, text, waits);
    });
  }

  return { call, domain: config.domain.toLowerCase(), groupGuid: config.groupGuid, logger: options.logger };
}

/**
 * What a failed answer means (VENDORS.md 1.6): a used-up quota or a rate limit waits (Retry-After when Bitly
 * sends one, else `waits`), 409 is a conflict, 404/410 not found, 402 a plan refusal, 5xx and 408 unavailable,
 * anything else rejected (the same call will fail again).
 */
export function toProviderError(
  method: string,
  path: string,
  res: Response,
  text: string,
  waits: { rateLimitRetryMs: number; quotaRetryMs: number },
): ProviderError {
  const { rateLimitRetryMs, quotaRetryMs } = waits;
  let envelope: { message?: string; description?: string } = {};
  try {
    envelope = JSON.parse(text) as typeof envelope;
  } catch {}
  const code = envelope.message ?? '';
  const summary = `Bitly ${method} ${path} → ${res.status}${code ? ` ${code}` : ''}${
    envelope.description ? `: ${envelope.description}` : ''
  }`.slice(0, 500);
  const status = res.status;
  const retryAfterHeader = Number(res.headers.get('Retry-After'));
  const retryAfter = (fallback: number) =>
    Number.isFinite(retryAfterHeader) && retryAfterHeader > 0 ? retryAfterHeader * 1000 : fallback;
  if (QUOTA_CODES.has(code) && (status === 429 || status === 403)) {
    return new ProviderError('quota_exceeded', summary, {
      status,
      code,
      retryAfterMs: retryAfter(quotaRetryMs),
    });
  }
  // The 429 form is current; 403 RATE_LIMIT_EXCEEDED (with X-Ratelimit-Reason) is the legacy one.
  if (
    status === 429 ||
    (status === 403 && (RATE_LIMIT_CODES.has(code) || res.headers.has('X-Ratelimit-Reason')))
  ) {
    return new ProviderError('rate_limited', summary, {
      status,
      code,
      retryAfterMs: retryAfter(rateLimitRetryMs),
    });
  }
  if (status === 409) return new ProviderError('conflict', summary, { status, code });
  if (status === 404 || status === 410) return new ProviderError('not_found', summary, { status, code });
  if (status === 402) return new ProviderError('plan_refused', summary, { status, code });
  if (status >= 500 || status === 408) return new ProviderError('unavailable', summary, { status, code });
  // 400 / 401 / 403 FORBIDDEN / 417 DNS_CONFIGURATION_ERROR / 422: the same call will fail again.
  return new ProviderError('rejected', summary, { status, code });
}

/** `promise`, or null when Bitly answered that there is no such link. */
export async function orNull<T>(promise: Promise<T>): Promise<T | null> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof ProviderError && error.kind === 'not_found') return null;
    throw error;
  }
}

/** Bitly refused the call because of the plan (402, or a 403 its plan forbids): another way may work. */
export function isPlanRefusal(error: unknown): boolean {
  return (
    error instanceof ProviderError &&
    (error.kind === 'plan_refused' || (error.kind === 'rejected' && error.details.status === 403))
  );
}
