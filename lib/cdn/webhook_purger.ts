import { signWebhook } from '../auth/webhook_signature.ts';
import { createOutgoingFetch, type OutgoingRule } from '../shared/outgoing_request.ts';
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

/** A CDN (or a cache in front of us) we reach through a webhook of our own making. */
export interface WebhookPurgerOptions extends CommonPurgerOptions {
  /** Where each purge is POSTed. */
  url: string;
  /** Shared secret for the `X-Lifeline-Signature` HMAC, the same scheme as our WordPress webhooks. */
  secret: string;
  /** The short host's base URL, for the absolute `urls` (e.g. `https://sho.rt`). */
  shortBaseUrl: string;
  /** Items per request (default 100). */
  batchSize?: number;
  /** Clock for the signature timestamp (tests). */
  now?: () => number;
  /** The outgoing-request rule the default fetch obeys (docs/adr/0058-outgoing-requests-rule.md). */
  outgoing?: OutgoingRule;
}

/** Items per webhook request unless told otherwise. */
export const WEBHOOK_PURGE_BATCH_SIZE = 100;

/**
 * The generic purge webhook. Each batch is one POST with a JSON body, one of
 *   `{"paths": ["/9Kx2a", ...], "urls": ["https://sho.rt/9Kx2a", ...]}`
 *   `{"prefixes": ["/9Kx"], "urls": ["https://sho.rt/9Kx"]}`
 *   `{"tags": ["link:9Kx2a"]}`
 * signed `X-Lifeline-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` (re-signed on
 * each attempt, so a retry minutes later is still inside the receiver's replay window) and carrying
 * `X-Lifeline-Delivery: <uuid>`, the same for every attempt of one batch so the receiver can drop repeats.
 * 2xx: done; 408/429/5xx: retried (Retry-After honoured); 401/403: fatal; other 4xx: that batch refused.
 */
export function createWebhookPurger(options: WebhookPurgerOptions): CdnPurger {
  requireOption(isHttpUrl(options.url), 'the purge webhook URL must be an absolute http(s) URL');
  requireOption(
    typeof options.secret === 'string' && options.secret.length >= 16,
    'the purge webhook secret must have at least 16 characters',
  );
  requireOption(isHttpUrl(options.shortBaseUrl), 'the short base URL must be an absolute http(s) URL');
  // The URL is configuration, so it gets the rule every configured URL gets: no private address unless allowed.
  const fetchFn = options.fetch ?? createOutgoingFetch(options.outgoing);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const now = options.now ?? Date.now;
  const batchSize = Math.max(1, options.batchSize ?? WEBHOOK_PURGE_BATCH_SIZE);

  function sender(toBody: (batch: string[]) => Record<string, string[]>) {
    const deliveries = new WeakMap<string[], string>();
    return async (batch: string[]): Promise<BatchOutcome> => {
      let delivery = deliveries.get(batch);
      if (!delivery) {
        delivery = crypto.randomUUID();
        deliveries.set(batch, delivery);
      }
      const body = JSON.stringify(toBody(batch));
      const signature = await signWebhook(options.secret, body, now() / 1000);
      const answer = await requestOnce(
        fetchFn,
        options.url,
        {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'X-Lifeline-Signature': signature,
            'X-Lifeline-Delivery': delivery,
          },
          body,
        },
        timeoutMs,
      );
      if (!answer.ok) return { ok: false, retryable: true, reason: `purge webhook ${answer.reason}` };
      return classifyStatus(
        answer.status,
        answer.headers,
        `purge webhook answered ${answer.status}${answer.text ? `: ${answer.text.slice(0, 200)}` : ''}`,
        now(),
      );
    };
  }

  function purge(
    items: string[],
    validate: (item: string) => string | null,
    toBody: (batch: string[]) => Record<string, string[]>,
  ): Promise<PurgeResult> {
    const { valid, invalid } = partitionItems(items, validate);
    return runBatches({
      purger: 'webhook',
      items: valid,
      invalid,
      batchSize,
      send: sender(toBody),
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  const urlsOf = (batch: string[]) => batch.map((p) => toAbsoluteUrl(options.shortBaseUrl, p));
  return {
    name: 'webhook',
    purgePaths: (paths) => purge(paths, checkPurgePath, (batch) => ({ paths: batch, urls: urlsOf(batch) })),
    purgePrefixes: (prefixes) =>
      purge(prefixes, checkPurgePath, (batch) => ({ prefixes: batch, urls: urlsOf(batch) })),
    purgeTags: (tags) => purge(tags, checkTag, (batch) => ({ tags: batch })),
  };
}
