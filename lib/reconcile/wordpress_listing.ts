// The client of the plugin's signed listing (integrations/wordpress/CONTRACT.md §5): `GET {restUrl}posts?page=
// &per_page=`, the request signed for its kind over method, host, path and query and a fresh nonce the plugin
// refuses to see twice, the answer's signature (bound to that nonce) checked over the raw body before anything
// in it is trusted. Guarded like any outbound call to an address we were told about: https (plain http only to
// loopback, for tests), the outgoing-request rule, only the restUrl's own host, a deadline and a size cap.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  listingAnswerMessage,
  listingRequestMessage,
  signKind,
  verifyKindSignature,
} from '../auth/webhook_signature.ts';
import { importedTitleSchema } from '../links/link.ts';
import { installationIdSchema, lenientGuid, lenientKnownCode } from '../publishing/wordpress_event.ts';
import { PermanentFailure, TransientFailure } from '../shared/errors.ts';
import {
  createOutgoingFetch,
  OutgoingRequestRefused,
  type OutgoingRule,
} from '../shared/outgoing_request.ts';
import { toCanonicalTarget } from '../targets/new_target_problem.ts';

/** What reading a site's listing needs (ActivityDeps.wordpress). */
export interface WordPressListingDeps {
  /** The shared secret: WORDPRESS_WEBHOOK_SECRET, or the one generated on first run. */
  getSecret(): Promise<string>;
  /** WORDPRESS_REST_URLS: a site's listing base, winning over the restUrl its events carry. */
  restUrls: Readonly<Record<string, string>>;
  /** The outgoing-request rule (OUTGOING_ALLOWED_PRIVATE) the default fetch obeys; default: no private address. */
  outgoing?: OutgoingRule;
  fetch?: typeof fetch;
  /** Per request (default 20 s). */
  timeoutMs?: number;
  /** Largest answer read (default 8 MiB: 500 posts with 2 KB permalinks and 1,000-character titles fit). */
  maxBytes?: number;
  /** Posts per page (the plugin allows 1..500; default 500). */
  perPage?: number;
}

export const LISTING_STATUSES = ['publish', 'future', 'draft', 'pending', 'private', 'trash'] as const;

export const listingPageSchema = z.object({
  site: z.string(),
  page: z.number().int(),
  perPage: z.number().int(),
  total: z.number().int().min(0),
  totalPages: z.number().int().min(0),
  /** The plugin's installation (ADR 0057); absent from plugins before it. */
  installationId: installationIdSchema.optional().catch(undefined),
  posts: z.array(
    z.object({
      postId: z.number().int().positive(),
      status: z.string(),
      // In canonical form when it has one: compared with stored targets, which are canonical.
      permalink: z.string().transform(toCanonicalTarget),
      title: importedTitleSchema.optional(),
      modifiedAt: z.string(),
      /** The code the post claims and its GUID (ADR 0057); a malformed claim is ignored. */
      knownCode: lenientKnownCode,
      guid: lenientGuid,
    }),
  ),
});
export type ListingPage = z.infer<typeof listingPageSchema>;
export type ListedPost = ListingPage['posts'][number];

const MAX_REDIRECTS = 3;

/** localhost, 127.0.0.0/8 and ::1: where a test's WordPress runs over plain http. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** `{restUrl}posts` with the query joined as the contract says (`&` after an existing `?`). */
export function buildListingUrl(restUrl: string, query: Record<string, string>): URL {
  const params = new URLSearchParams(query).toString();
  return new URL(`${restUrl}posts${restUrl.includes('?') ? '&' : '?'}${params}`);
}

async function readCapped(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel();
    throw new PermanentFailure(
      `the listing answer is ${declared} bytes, over the ${maxBytes}-byte cap`,
      'ListingTooLarge',
    );
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new PermanentFailure(`the listing answer exceeds the ${maxBytes}-byte cap`, 'ListingTooLarge');
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/**
 * One verified page of a site's listing. Network trouble, timeouts and 5xx are TransientFailures (retry);
 * a refused signature, a wrong answer or a redirect elsewhere are PermanentFailures naming what to fix.
 */
export async function fetchListingPage(
  deps: WordPressListingDeps,
  input: { site: string; restUrl: string; page: number; modifiedAfter?: string; postId?: number },
): Promise<ListingPage> {
  const secret = await deps.getSecret();
  const doFetch = deps.fetch ?? createOutgoingFetch(deps.outgoing);
  const timeoutMs = deps.timeoutMs ?? 20_000;
  const query: Record<string, string> = { page: String(input.page), per_page: String(deps.perPage ?? 500) };
  if (input.modifiedAfter) query.modified_after = input.modifiedAfter;
  if (input.postId !== undefined) query.post_id = String(input.postId);
  let url = buildListingUrl(input.restUrl, query);
  const host = url.host;
  if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname)) {
    // The answer lists drafts and embargoed titles, and the request is a credential for 300 s: never in clear.
    throw new PermanentFailure(
      `WordPress listing of ${input.site} refused: ${url.protocol}//${host} is not https (plain http only to loopback)`,
      'ListingAddressRefused',
    );
  }
  for (let hops = 0; ; hops++) {
    const target = `${url.pathname}${url.search}`;
    const nonce = randomBytes(16).toString('hex');
    const signed = listingRequestMessage('GET', url.host, target, nonce);
    let res: Response;
    try {
      res = await doFetch(url, {
        method: 'GET',
        redirect: 'manual',
        headers: {
          Accept: 'application/json',
          'User-Agent': 'Lifeline-Reconcile/1',
          'X-Lifeline-Signature': await signKind(secret, 'listing-request', signed, Date.now() / 1000, nonce),
        },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      if (error instanceof OutgoingRequestRefused) {
        // A restUrl at a private or metadata address (or plain http) is wrong, not down: no retry.
        throw new PermanentFailure(
          `WordPress listing of ${input.site} refused: ${error.message}`,
          'ListingAddressRefused',
        );
      }
      const timedOut = (error as Error).name === 'TimeoutError';
      throw new TransientFailure(
        `WordPress listing of ${input.site} ${timedOut ? `timed out after ${timeoutMs} ms` : `failed: ${(error as Error).message}`}`,
        'WordPressUnavailable',
      );
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const location = res.headers.get('location');
      const next = location ? new URL(location, url) : null;
      // Only within the restUrl's own host: a redirect must never send our signed request anywhere else.
      if (!next || next.host !== host || hops >= MAX_REDIRECTS) {
        throw new PermanentFailure(
          `WordPress listing of ${input.site} redirected to ${next?.host ?? 'nowhere'} (only ${host} is read): fix its restUrl or WORDPRESS_REST_URLS`,
          'ListingRedirected',
        );
      }
      url = next;
      continue;
    }
    // Only the status of a refusal is kept: whatever answered (which may not be WordPress at all) never gets
    // its body into our errors, logs or the operations page.
    if (res.status >= 500 || res.status === 429 || res.status === 408) {
      await res.body?.cancel();
      throw new TransientFailure(
        `WordPress listing of ${input.site} answered ${res.status}`,
        'WordPressUnavailable',
      );
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      const hint =
        res.status === 401
          ? ' (the plugin refused our signature: check the shared secret and both clocks, and update a plugin that predates kind-bound (v2) listing signatures)'
          : '';
      throw new PermanentFailure(
        `WordPress listing of ${input.site} answered ${res.status}${hint}`,
        'ListingRefused',
      );
    }
    const raw = await readCapped(res, deps.maxBytes ?? 8 * 1024 * 1024);
    const check = await verifyKindSignature(
      secret,
      'listing-answer',
      res.headers.get('x-lifeline-signature'),
      listingAnswerMessage(nonce, raw),
      Date.now() / 1000,
    );
    if (!check.ok) {
      throw new PermanentFailure(
        `WordPress listing of ${input.site}: the answer's signature is refused (${check.reason}); nothing in it is trusted`,
        'ListingUnsigned',
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw new PermanentFailure(`WordPress listing of ${input.site} is not JSON`, 'ListingInvalid');
    }
    const parsed = listingPageSchema.safeParse(json);
    if (!parsed.success) {
      throw new PermanentFailure(
        `WordPress listing of ${input.site} has an unexpected shape: ${parsed.error.issues[0]?.message}`,
        'ListingInvalid',
      );
    }
    if (parsed.data.site !== input.site) {
      throw new PermanentFailure(
        `the listing at ${input.restUrl} belongs to site "${parsed.data.site}", not "${input.site}"`,
        'ListingInvalid',
      );
    }
    return parsed.data;
  }
}
