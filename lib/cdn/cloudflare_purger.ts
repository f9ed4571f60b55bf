import type { CdnPurger, CommonPurgerOptions, PurgeResult } from './cdn_purger.ts';
import {
  type BatchOutcome,
  checkPurgePath,
  checkTag,
  classifyStatus,
  isHttpUrl,
  partitionItems,
  requestOnce,
  requireOption,
  runBatches,
  toAbsoluteUrl,
} from './purge_batches.ts';

/** Cloudflare's zone purge (POST /zones/{zone_id}/purge_cache) as we call it. */
export interface CloudflarePurgerOptions extends CommonPurgerOptions {
  zoneId: string;
  /** An API token with the zone's Cache Purge permission (sent as a Bearer token, never logged). */
  apiToken: string;
  /** The short host's base URL: `files` are absolute URLs on it, `prefixes` its host + path. */
  shortBaseUrl: string;
  /** Default `https://api.cloudflare.com/client/v4` (tests point it at the fake). */
  apiBaseUrl?: string;
  /** URLs per call: 30 on Free/Pro/Business, 500 on Enterprise (default 30). */
  filesPerRequest?: number;
  /** Tags or prefixes per call (default 30). */
  keysPerRequest?: number;
}

export const CLOUDFLARE_API_BASE_URL = 'https://api.cloudflare.com/client/v4';
/** Cloudflare's per-call limit for purge by URL on Free/Pro/Business zones (Enterprise: 500). */
export const CLOUDFLARE_FILES_PER_REQUEST = 30;
/** Cloudflare's per-call limit for tags, hosts or prefixes in its API reference (newer docs say 100). */
export const CLOUDFLARE_KEYS_PER_REQUEST = 30;

/**
 * Error codes after which no other batch can succeed either: malformed or wrong credentials (6003/6111,
 * 10000, 9109) and a zone id the API cannot route (7000/7003).
 */
const FATAL_CODES = new Set(['6003', '6111', '7000', '7003', '9109', '10000']);

interface CloudflareEnvelope {
  success?: boolean;
  errors?: { code?: number; message?: string }[];
  result?: { id?: string } | null;
}

/**
 * Purges through Cloudflare's API: `{"files": [absolute URLs]}` in batches of `filesPerRequest`,
 * `{"prefixes": ["sho.rt/9Kx"]}` and `{"tags": [...]}` in batches of `keysPerRequest`. An answer counts only when
 * it is 2xx with `success: true`; 429 and 5xx are retried (Retry-After honoured), the rest reported.
 */
export function createCloudflarePurger(options: CloudflarePurgerOptions): CdnPurger {
  requireOption(
    /^[A-Za-z0-9_-]{1,64}$/.test(options.zoneId ?? ''),
    'the Cloudflare zone id must be set (32 hex characters)',
  );
  requireOption(/^[\x21-\x7e]+$/.test(options.apiToken ?? ''), 'the Cloudflare API token must be set');
  requireOption(isHttpUrl(options.shortBaseUrl), 'the short base URL must be an absolute http(s) URL');
  requireOption(
    options.apiBaseUrl === undefined || isHttpUrl(options.apiBaseUrl),
    'the Cloudflare API base URL must be an http(s) URL',
  );
  const fetchFn = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const endpoint = `${(options.apiBaseUrl ?? CLOUDFLARE_API_BASE_URL).replace(/\/+$/, '')}/zones/${encodeURIComponent(options.zoneId)}/purge_cache`;
  const host = new URL(options.shortBaseUrl).host;

  async function send(body: Record<string, string[]>): Promise<BatchOutcome> {
    const answer = await requestOnce(
      fetchFn,
      endpoint,
      {
        method: 'POST',
        headers: { Authorization: `Bearer ${options.apiToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      },
      timeoutMs,
    );
    if (!answer.ok) return { ok: false, retryable: true, reason: `Cloudflare purge ${answer.reason}` };
    let envelope: CloudflareEnvelope = {};
    try {
      envelope = JSON.parse(answer.text) as CloudflareEnvelope;
    } catch {}
    const errors = (envelope.errors ?? []).map((e) => `${e.code ?? '?'} ${e.message ?? ''}`.trim());
    const code = envelope.errors?.[0]?.code;
    const reason =
      `Cloudflare purge answered ${answer.status}${errors.length ? `: ${errors.join('; ')}` : ''}`.slice(
        0,
        500,
      );
    const outcome = classifyStatus(answer.status, answer.headers, reason);
    if (outcome.ok) {
      if (envelope.success === true)
        return { ok: true, ...(envelope.result?.id ? { reference: envelope.result.id } : {}) };
      // A 2xx without success: true is not a purge we can count on, and sending it again changes nothing.
      return {
        ok: false,
        retryable: false,
        reason,
        status: answer.status,
        ...(code === undefined ? {} : { code: String(code) }),
      };
    }
    if (code === undefined) return outcome;
    return { ...outcome, code: String(code), ...(FATAL_CODES.has(String(code)) ? { fatal: true } : {}) };
  }

  function purge(
    items: string[],
    validate: (item: string) => string | null,
    batchSize: number,
    toBody: (batch: string[]) => Record<string, string[]>,
  ): Promise<PurgeResult> {
    const { valid, invalid } = partitionItems(items, validate);
    return runBatches({
      purger: 'cloudflare',
      items: valid,
      invalid,
      batchSize: Math.max(1, batchSize),
      send: (batch) => send(toBody(batch)),
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  const keysPerRequest = options.keysPerRequest ?? CLOUDFLARE_KEYS_PER_REQUEST;
  return {
    name: 'cloudflare',
    purgePaths: (paths) =>
      purge(paths, checkPurgePath, options.filesPerRequest ?? CLOUDFLARE_FILES_PER_REQUEST, (batch) => ({
        files: batch.map((p) => toAbsoluteUrl(options.shortBaseUrl, p)),
      })),
    // Cloudflare's prefixes name host + path without a scheme.
    purgePrefixes: (prefixes) =>
      purge(prefixes, checkPurgePath, keysPerRequest, (batch) => ({
        prefixes: batch.map((p) => `${host}${p}`),
      })),
    purgeTags: (tags) => purge(tags, checkTag, keysPerRequest, (batch) => ({ tags: batch })),
  };
}
