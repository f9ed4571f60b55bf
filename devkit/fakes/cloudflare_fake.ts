// A real HTTP server reproducing Cloudflare's zone purge, `POST /client/v4/zones/{zone_id}/purge_cache`, for tests.
// Sources (looked up for this fake; no live calls):
//   - Body: exactly one of `files` (absolute URLs, or `{url, headers}` objects), `tags`, `hosts`, `prefixes`
//     (host + path, no scheme) or `purge_everything: true`; answer envelope
//     `{success, errors: [{code, message}], messages, result: {id}}`.
//     [spec: Cloudflare API reference "Purge Cached Content", as embedded in cloudflare-go / cloudflare-typescript]
//   - Per call: "For Zones on Free/Pro/Business plan, you may purge up to 30 URLs in one API call. For Zones on
//     Enterprise plan, you may purge up to 500 URLs in one API call"; "You may purge up to 30 tags, hosts, or
//     prefixes in one API call" [spec: same reference text; cloudflare-docs PR #13619]. The purge page now shows
//     "Max operations per request: 100" for tags/hosts/prefixes, and cloudflare-docs#21338 says the files
//     limit is still 30 [docs: developers.cloudflare.com/cache/how-to/purge-cache]. Both limits are options here.
//   - Over the per-call limit: HTTP 400 [obs: MnemeHQ/mneme PR #215, 245 URLs in one call], message "You may only
//     purge up to 30 files per API call" [obs: a client's notes]; the numeric code was not found anywhere, so the
//     fake's 1004 is [infer] and tests never assert it.
//   - Rate limits: a token bucket per account — Free 5 requests/minute (bucket 25), Pro 5/s (25), Business 10/s
//     (50), Enterprise 50/s (500) [docs: purge-cache page, "Purge limits"]; on top, the Client API limit of
//     1,200 requests / 5 minutes per token [docs: fundamentals/api/reference/limits]. Excess: HTTP 429 with
//     `{"code": 971, "message": "Please wait and consider throttling your request speed"}`
//     [obs: terraform-provider-cloudflare #5505, several clients' fixtures]; the fake adds Retry-After (seconds
//     until a token is back), which Cloudflare's limits page describes for throttled requests [docs].
//   - Auth: `Authorization: Bearer <token>`. A wrong token: HTTP 403 `{"code": 10000, "message": "Authentication
//     error"}` [obs: many clients' fixtures]. A missing or malformed header: 400 code 6003 "Invalid request
//     headers" with an `error_chain` entry 6111 "Invalid format for Authorization header" [obs:
//     jakejarvis/cloudflare-purge-action #1 shows the 6003 / 61xx chain for X-Auth-Key].
//   - An unknown zone id: codes 7003 "Could not route to /zones/<id>/purge_cache, perhaps your object identifier is
//     invalid?" and 7000 "No route for that URI" [obs: lukesUbuntu/cloudflare-api #4]; HTTP 400 is [infer].
// Scripted failures (429 with Retry-After, 5xx, slowness, drops, hangs) come from ScriptedHttpServer.
import {
  type FakeAnswer,
  type FakeRequest,
  type ScriptedFailure,
  ScriptedFake,
} from './scripted_http_server.ts';

export type CloudflarePlan = 'free' | 'pro' | 'business' | 'enterprise';

/** Purge token buckets per plan: refill per second and capacity [docs: purge-cache page]. */
const PLAN_BUCKETS: Record<CloudflarePlan, { perSecond: number; capacity: number }> = {
  free: { perSecond: 5 / 60, capacity: 25 },
  pro: { perSecond: 5, capacity: 25 },
  business: { perSecond: 10, capacity: 50 },
  enterprise: { perSecond: 50, capacity: 500 },
};

export interface CloudflarePurge {
  kind: 'files' | 'tags' | 'hosts' | 'prefixes' | 'purge_everything';
  items: string[];
  /** The zone the purge was made in. */
  zone: string;
}

export interface CloudflareFakeOptions {
  zoneId?: string;
  /** More zones the token may purge (one per short domain, as a newsroom with several apex domains has). */
  otherZoneIds?: string[];
  token?: string;
  plan?: CloudflarePlan;
  /** Tags, hosts or prefixes per call (default 30, the API reference's figure). */
  keysPerCall?: number;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): FakeAnswer => ({
  status,
  body: JSON.stringify(body),
  headers: { 'Content-Type': 'application/json', ...headers },
});

function envelopeError(status: number, errors: object[], headers: Record<string, string> = {}): FakeAnswer {
  return json(status, { success: false, errors, messages: [], result: null }, headers);
}

export class CloudflareFake extends ScriptedFake {
  readonly zoneId: string;
  /** Every zone the token may purge: zoneId first. */
  readonly zoneIds: string[];
  readonly token: string;
  plan: CloudflarePlan;
  keysPerCall: number;
  /** Purges accepted, in order. */
  readonly purges: CloudflarePurge[] = [];
  private bucket: { tokens: number; at: number };

  constructor(options: CloudflareFakeOptions = {}) {
    super();
    this.zoneId = options.zoneId ?? '023e105f4ecef8ad9ca31a8372d0c353';
    this.zoneIds = [this.zoneId, ...(options.otherZoneIds ?? [])];
    this.token = options.token ?? `cf-${crypto.randomUUID()}`;
    this.plan = options.plan ?? 'enterprise';
    this.keysPerCall = options.keysPerCall ?? 30;
    this.bucket = { tokens: PLAN_BUCKETS[this.plan].capacity, at: Date.now() };
  }

  /** The base to give the purger (`<url>/client/v4`). */
  get apiBaseUrl(): string {
    return `${this.server.url}/client/v4`;
  }

  /** Forgets purges, requests and failures; refills the bucket (for `plan`). */
  protected clearRecords(): void {
    this.purges.length = 0;
    this.bucket = { tokens: PLAN_BUCKETS[this.plan].capacity, at: Date.now() };
  }

  /** Every URL purged by `files`, in order. */
  purgedFiles(): string[] {
    return this.purges.filter((p) => p.kind === 'files').flatMap((p) => p.items);
  }

  failNext(failure: ScriptedFailure): void {
    this.server.failNext(failure);
  }

  /** The next `times` calls get Cloudflare's 429 (code 971) with `Retry-After: seconds`. */
  rateLimitNext(retryAfterSeconds: number, times = 1): void {
    this.server.failNext({ times, answer: this.rateLimited(retryAfterSeconds) });
  }

  /** The next `times` calls get a 5xx with Cloudflare's envelope. */
  serverErrorNext(status = 503, times = 1): void {
    this.server.failNext({
      times,
      answer: envelopeError(status, [
        { code: 10001, message: 'Service unavailable, please try again later' },
      ]),
    });
  }

  private rateLimited(retryAfterSeconds: number): FakeAnswer {
    return envelopeError(
      429,
      [{ code: 971, message: 'Please wait and consider throttling your request speed' }],
      {
        'Retry-After': String(retryAfterSeconds),
      },
    );
  }

  protected override authorize(request: FakeRequest): FakeAnswer | null {
    const m = /^\/client\/v4\/zones\/([^/]+)\/purge_cache$/.exec(request.path);
    if (!m || request.method !== 'POST') {
      return envelopeError(400, [
        {
          code: 7003,
          message: `Could not route to ${request.path}, perhaps your object identifier is invalid?`,
        },
        { code: 7000, message: 'No route for that URI' },
      ]);
    }
    const auth = String(request.headers.authorization ?? '');
    if (!/^Bearer [A-Za-z0-9._~+/=-]+$/.test(auth)) {
      return envelopeError(400, [
        {
          code: 6003,
          message: 'Invalid request headers',
          error_chain: [{ code: 6111, message: 'Invalid format for Authorization header' }],
        },
      ]);
    }
    if (auth !== `Bearer ${this.token}`)
      return envelopeError(403, [{ code: 10000, message: 'Authentication error' }]);
    if (!this.zoneIds.includes(decodeURIComponent(m[1]!))) {
      return envelopeError(400, [
        {
          code: 7003,
          message: `Could not route to ${request.path}, perhaps your object identifier is invalid?`,
        },
        { code: 7000, message: 'No route for that URI' },
      ]);
    }
    // Every authenticated purge call takes a token, accepted or not.
    const { perSecond, capacity } = PLAN_BUCKETS[this.plan];
    const now = Date.now();
    this.bucket.tokens = Math.min(capacity, this.bucket.tokens + ((now - this.bucket.at) / 1000) * perSecond);
    this.bucket.at = now;
    if (this.bucket.tokens < 1) return this.rateLimited(Math.ceil((1 - this.bucket.tokens) / perSecond));
    this.bucket.tokens -= 1;
    return null;
  }

  protected answer(request: FakeRequest): FakeAnswer {
    const invalid = (message: string, code = 1004) => envelopeError(400, [{ code, message }]);
    const zone = decodeURIComponent(/^\/client\/v4\/zones\/([^/]+)\//.exec(request.path)?.[1] ?? '');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(request.rawBody) as Record<string, unknown>;
    } catch {
      return invalid('Request body is not valid JSON', 6007);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return invalid('Request body must be an object');
    const kinds = (['files', 'tags', 'hosts', 'prefixes', 'purge_everything'] as const).filter(
      (k) => k in body,
    );
    if (kinds.length !== 1)
      return invalid('Exactly one of files, tags, hosts, prefixes or purge_everything is required');
    const kind = kinds[0]!;
    if (kind === 'purge_everything') {
      if (body.purge_everything !== true) return invalid('purge_everything must be true');
      this.purges.push({ kind, items: [], zone });
      return this.ok(zone);
    }
    const list = body[kind];
    if (!Array.isArray(list) || list.length === 0)
      return invalid(`"${kind}" must be a non-empty array`, 1014);
    const limit = kind === 'files' ? (this.plan === 'enterprise' ? 500 : 30) : this.keysPerCall;
    if (list.length > limit) return invalid(`You may only purge up to ${limit} ${kind} per API call`);
    const items: string[] = [];
    for (const entry of list) {
      const value =
        kind === 'files' && entry && typeof entry === 'object' ? (entry as { url?: unknown }).url : entry;
      if (typeof value !== 'string' || value === '')
        return invalid(`Every entry of "${kind}" must be a string`);
      if (kind === 'files' && !/^https?:\/\/[^/\s]+\/?\S*$/.test(value))
        return invalid(`Invalid URL in files: ${value}`);
      if (kind === 'prefixes' && (/^[a-z]+:\/\//i.test(value) || !value.includes('/'))) {
        return invalid(`Prefixes must be host and path without a scheme: ${value}`);
      }
      items.push(value);
    }
    this.purges.push({ kind, items, zone });
    return this.ok(zone);
  }

  private ok(zone: string): FakeAnswer {
    return json(200, { success: true, errors: [], messages: [], result: { id: zone } });
  }
}

/** Starts a Cloudflare purge fake on a free port. */
export async function startCloudflareFake(options: CloudflareFakeOptions = {}): Promise<CloudflareFake> {
  return new CloudflareFake(options).start();
}
