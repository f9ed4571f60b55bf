import { type AwsCredentials, signAwsRequest } from './aws_sigv4.ts';
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
} from './purge_batches.ts';

/** CloudFront's CreateInvalidation as we call it. */
export interface CloudFrontPurgerOptions extends CommonPurgerOptions {
  distributionId: string;
  /** An IAM identity allowed `cloudfront:CreateInvalidation` on the distribution; the secret is never logged. */
  credentials: AwsCredentials;
  /** Default `https://cloudfront.amazonaws.com` (tests point it at the fake). */
  apiBaseUrl?: string;
  /** Paths per invalidation (default 1,000; CloudFront allows 3,000 file paths in progress per distribution). */
  pathsPerInvalidation?: number;
  /** Suggested wait returned when CloudFront has too many invalidations in progress (default 60 s). */
  inProgressRetryMs?: number;
  /** Clock for the signature (tests). */
  now?: () => Date;
}

export const CLOUDFRONT_API_BASE_URL = 'https://cloudfront.amazonaws.com';
const API_VERSION = '2020-05-31';
const XML_NAMESPACE = `http://cloudfront.amazonaws.com/doc/${API_VERSION}/`;
/** File paths per invalidation unless told otherwise: a third of the 3,000 allowed in progress. */
export const CLOUDFRONT_PATHS_PER_INVALIDATION = 1000;
/** Wildcard paths allowed in progress per distribution: more in one batch could never be accepted. */
export const CLOUDFRONT_WILDCARDS_IN_PROGRESS = 15;

// CloudFront's error codes by what they mean for the other batches and for a retry.
const FATAL_CODES = new Set([
  'AccessDenied',
  'SignatureDoesNotMatch',
  'InvalidClientTokenId',
  'MissingAuthenticationToken',
  'IncompleteSignature',
  'NoSuchDistribution',
]);
const TRANSIENT_CODES = new Set(['Throttling', 'ThrottlingException', 'ServiceUnavailable', 'InternalError']);

function escapeXml(value: string): string {
  return value.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function unescapeXml(value: string): string {
  return value
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)))
    .replace(/&amp;/g, '&');
}

/** The text of the first `<name>` element in a small XML document, or undefined. */
function xmlText(xml: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  return m ? unescapeXml(m[1]!) : undefined;
}

/** The `InvalidationBatch` document for `items` under a caller reference. */
export function toInvalidationBatchXml(items: string[], callerReference: string): string {
  const paths = items.map((p) => `<Path>${escapeXml(p)}</Path>`).join('');
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<InvalidationBatch xmlns="${XML_NAMESPACE}"><Paths><Quantity>${items.length}</Quantity><Items>${paths}</Items></Paths>` +
    `<CallerReference>${escapeXml(callerReference)}</CallerReference></InvalidationBatch>`
  );
}

/**
 * Invalidates through CloudFront: one CreateInvalidation (SigV4, service `cloudfront`, region `us-east-1`) per
 * batch of paths; prefixes become `/prefix*` wildcards (at most 15 per batch) and tags `#tag` items (for
 * distributions with cache tags). Each batch keeps one CallerReference across its retries, so a retry after a
 * lost answer returns the invalidation already made instead of making a second one. `Throttling` and 5xx are
 * retried with backoff; `TooManyInvalidationsInProgress` is reported at once as retryable after
 * `inProgressRetryMs` (invalidations take minutes to finish, waiting here would not help).
 */
export function createCloudFrontPurger(options: CloudFrontPurgerOptions): CdnPurger {
  requireOption(
    /^[A-Z0-9]{1,64}$/.test(options.distributionId ?? ''),
    'the CloudFront distribution id must be set (e.g. EDFDVBD6EXAMPLE)',
  );
  requireOption(
    /^[A-Z0-9]{16,128}$/.test(options.credentials?.accessKeyId ?? '') &&
      (options.credentials?.secretAccessKey ?? '') !== '',
    'the CloudFront access key id and secret access key must be set',
  );
  requireOption(
    options.apiBaseUrl === undefined || isHttpUrl(options.apiBaseUrl),
    'the CloudFront API base URL must be an http(s) URL',
  );
  const fetchFn = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const now = options.now ?? (() => new Date());
  const endpoint = `${(options.apiBaseUrl ?? CLOUDFRONT_API_BASE_URL).replace(/\/+$/, '')}/${API_VERSION}/distribution/${encodeURIComponent(options.distributionId)}/invalidation`;
  const inProgressRetryMs = options.inProgressRetryMs ?? 60_000;
  const references = new WeakMap<string[], string>();

  async function send(batch: string[]): Promise<BatchOutcome> {
    let callerReference = references.get(batch);
    if (!callerReference) {
      callerReference = `lifeline-${crypto.randomUUID()}`;
      references.set(batch, callerReference);
    }
    const body = toInvalidationBatchXml(batch, callerReference);
    const signed = await signAwsRequest(
      { method: 'POST', url: endpoint, headers: { 'content-type': 'application/xml' }, body },
      { credentials: options.credentials, region: 'us-east-1', service: 'cloudfront', now: now() },
    );
    const answer = await requestOnce(
      fetchFn,
      endpoint,
      { method: 'POST', headers: signed.headers, body },
      timeoutMs,
    );
    if (!answer.ok)
      return { ok: false, retryable: true, reason: `CloudFront CreateInvalidation ${answer.reason}` };
    if (answer.status === 201 || answer.status === 200) {
      const id = xmlText(answer.text, 'Id');
      return { ok: true, ...(id ? { reference: id } : {}) };
    }
    const code = xmlText(answer.text, 'Code');
    const message = xmlText(answer.text, 'Message');
    const reason =
      `CloudFront CreateInvalidation answered ${answer.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`.slice(
        0,
        500,
      );
    if (code === 'TooManyInvalidationsInProgress') {
      return {
        ok: false,
        retryable: true,
        noImmediateRetry: true,
        retryAfterMs: inProgressRetryMs,
        reason,
        status: answer.status,
        code,
      };
    }
    if (code && TRANSIENT_CODES.has(code))
      return { ok: false, retryable: true, reason, status: answer.status, code };
    const outcome = classifyStatus(answer.status, answer.headers, reason);
    if (outcome.ok) return { ok: false, retryable: false, reason, status: answer.status };
    return {
      ...outcome,
      ...(code ? { code } : {}),
      ...(code && FATAL_CODES.has(code) ? { fatal: true } : {}),
    };
  }

  function purge(
    items: string[],
    validate: (item: string) => string | null,
    batchSize: number,
    toItem: (item: string) => string,
  ): Promise<PurgeResult> {
    const { valid, invalid } = partitionItems(items, validate);
    const wire = new Map(valid.map((item) => [toItem(item), item]));
    return runBatches({
      purger: 'cloudfront',
      items: [...wire.keys()],
      invalid,
      batchSize: Math.max(1, batchSize),
      send,
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    }).then((result) => {
      // Report items as the caller gave them, not in CloudFront's wildcard or tag form.
      const back = (item: string) => wire.get(item) ?? item;
      return {
        ...result,
        purged: result.purged.map(back),
        failed: result.failed.map((f) => ({ ...f, items: f.items.map(back) })),
      };
    });
  }

  return {
    name: 'cloudfront',
    purgePaths: (paths) =>
      purge(
        paths,
        checkPurgePath,
        options.pathsPerInvalidation ?? CLOUDFRONT_PATHS_PER_INVALIDATION,
        (p) => p,
      ),
    purgePrefixes: (prefixes) =>
      purge(prefixes, checkPurgePath, CLOUDFRONT_WILDCARDS_IN_PROGRESS, (p) => `${p}*`),
    purgeTags: (tags) =>
      purge(
        tags,
        checkTag,
        options.pathsPerInvalidation ?? CLOUDFRONT_PATHS_PER_INVALIDATION,
        (t) => `#${t}`,
      ),
  };
}
