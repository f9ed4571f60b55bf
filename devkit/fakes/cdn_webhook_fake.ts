// A receiver of our generic CDN purge webhook (lib/cdn/webhook_purger.ts), for tests: it is the other end of a
// contract we define ourselves, so it checks it strictly:
//   - POST only, `Content-Type: application/json`;
//   - `X-Lifeline-Signature: t=…,v1=…` verified over the raw body with the shared secret and the 300 s replay
//     window (401 with a reason otherwise), the same scheme as our WordPress webhooks;
//   - a body with exactly one of `paths` / `prefixes` (each with the matching absolute `urls`) / `tags`, arrays of
//     non-empty strings, paths absolute (400 with a reason otherwise);
//   - `X-Lifeline-Delivery` de-duplicates: a retried delivery is answered 200 again but recorded once;
//   - scripted failures: 429 with Retry-After, 5xx, slowness, dropped or hung connections.
import { verifyWebhookSignature } from '../../lib/auth/webhook_signature.ts';
import { type FakeRequest, type ScriptedFailure, ScriptedFake } from './scripted_http_server.ts';

export interface WebhookPurge {
  kind: 'paths' | 'prefixes' | 'tags';
  items: string[];
  urls: string[];
  delivery: string;
}

export class CdnWebhookFake extends ScriptedFake {
  readonly secret: string;
  readonly shortBaseUrl: string;
  /** Purges accepted, once per delivery. */
  readonly purges: WebhookPurge[] = [];
  private readonly deliveries = new Set<string>();

  constructor(options: { secret?: string; shortBaseUrl?: string } = {}) {
    super();
    this.secret = options.secret ?? `whsec-${crypto.randomUUID()}`;
    this.shortBaseUrl = options.shortBaseUrl ?? 'https://sho.rt';
  }

  /** The URL to give the purger. */
  get url(): string {
    return `${this.server.url}/hooks/purge`;
  }

  protected clearRecords(): void {
    this.purges.length = 0;
    this.deliveries.clear();
  }

  /** Every path accepted, in order. */
  purgedPaths(): string[] {
    return this.purges.filter((p) => p.kind === 'paths').flatMap((p) => p.items);
  }

  failNext(failure: ScriptedFailure): void {
    this.server.failNext(failure);
  }

  /** The next `times` deliveries are answered 429 with `Retry-After: seconds`. */
  rateLimitNext(retryAfterSeconds: number, times = 1): void {
    this.server.failNext({
      times,
      answer: { status: 429, body: 'slow down', headers: { 'Retry-After': String(retryAfterSeconds) } },
    });
  }

  protected override async authorize(request: FakeRequest) {
    if (request.method !== 'POST' || request.path !== '/hooks/purge')
      return { status: 404, body: 'not found' };
    if (!String(request.headers['content-type'] ?? '').startsWith('application/json')) {
      return { status: 415, body: 'expected application/json' };
    }
    const check = await verifyWebhookSignature(
      this.secret,
      request.headers['x-lifeline-signature'] as string | undefined,
      request.rawBody,
      Date.now() / 1000,
    );
    return check.ok ? null : { status: 401, body: check.reason };
  }

  protected answer(request: FakeRequest) {
    const problem = (reason: string) => ({ status: 400, body: reason });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(request.rawBody) as Record<string, unknown>;
    } catch {
      return problem('body is not JSON');
    }
    const kinds = (['paths', 'prefixes', 'tags'] as const).filter((k) => k in body);
    if (kinds.length !== 1) return problem('exactly one of paths, prefixes or tags is required');
    const kind = kinds[0]!;
    const items = body[kind];
    if (
      !Array.isArray(items) ||
      items.length === 0 ||
      !items.every((i) => typeof i === 'string' && i !== '')
    ) {
      return problem(`${kind} must be a non-empty array of strings`);
    }
    const urls = Array.isArray(body.urls) ? (body.urls as unknown[]) : [];
    if (kind !== 'tags') {
      if (!items.every((p: string) => p.startsWith('/'))) return problem(`${kind} must be absolute paths`);
      const expected = items.map((p: string) => `${this.shortBaseUrl}${p}`);
      if (JSON.stringify(urls) !== JSON.stringify(expected))
        return problem('urls must be the absolute URLs of the paths');
    }
    const delivery = String(request.headers['x-lifeline-delivery'] ?? '');
    if (!delivery) return problem('X-Lifeline-Delivery is required');
    if (!this.deliveries.has(delivery)) {
      this.deliveries.add(delivery);
      this.purges.push({ kind, items: items as string[], urls: urls as string[], delivery });
    }
    return {
      status: 200,
      body: JSON.stringify({ ok: true }),
      headers: { 'Content-Type': 'application/json' },
    };
  }
}

/** Starts a purge-webhook receiver on a free port. */
export async function startCdnWebhookFake(options: { secret?: string; shortBaseUrl?: string } = {}) {
  return new CdnWebhookFake(options).start();
}
