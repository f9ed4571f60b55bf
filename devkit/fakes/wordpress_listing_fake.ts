// The WordPress plugin's signed listing (integrations/wordpress/CONTRACT.md §5) as a small HTTP server, for
// reconciliation tests that do not need a real WordPress: it checks the kind-bound request signature over
// method, Host, request target and nonce exactly as the plugin does, and refuses a nonce it has seen (401
// `lifeline_bad_signature` otherwise), pages posts by ID, and signs each answer over the nonce and its raw body.
// Switches: a wrong signature, a redirect to another host.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakePost {
  postId: number;
  status: 'publish' | 'future' | 'draft' | 'pending' | 'private' | 'trash';
  permalink: string;
  title?: string;
  modifiedAt?: string;
  /** The code the post claims (its `_lifeline_code` post meta) and its WordPress GUID. */
  knownCode?: string;
  guid?: string;
}

const hmac = (secret: string, kind: string, t: string | number, message: string) =>
  createHmac('sha256', secret).update(`lifeline/${kind}\n${t}.${message}`).digest();

function sign(secret: string, nonce: string, body: string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v2=${hmac(secret, 'listing-answer', t, `${nonce}\n${body}`).toString('hex')}`;
}

/** '' and the nonce when the request is signed for `GET <host> <target>`, else why not. */
function verify(
  secret: string,
  header: string | undefined,
  host: string,
  target: string,
  seen: Set<string>,
): { problem: string; nonce: string } {
  const m = /^t=(\d+),n=([0-9a-f]{16,64}),v2=([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return { problem: 'malformed X-Lifeline-Signature header', nonce: '' };
  const [, t, nonce, signature] = m as unknown as [string, string, string, string];
  if (Math.abs(Date.now() / 1000 - Number(t)) > 300) return { problem: 'stale signature', nonce };
  const expected = hmac(secret, 'listing-request', t, `GET\n${host.toLowerCase()}\n${target}\n${nonce}`);
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex')))
    return { problem: 'signature does not match', nonce };
  if (seen.has(nonce)) return { problem: 'replayed nonce', nonce };
  seen.add(nonce);
  return { problem: '', nonce };
}

/** The posts by ID, counting its changes: the sorted listing is made again only after one. */
class PostMap extends Map<number, FakePost> {
  changes = 0;
  override set(postId: number, post: FakePost): this {
    this.changes++;
    return super.set(postId, post);
  }
  override delete(postId: number): boolean {
    this.changes++;
    return super.delete(postId);
  }
  override clear(): void {
    this.changes++;
    super.clear();
  }
}

export class WordPressListingFake {
  readonly posts = new PostMap();
  /** The posts sorted by ID as of `posts.changes` (a site of a million posts is not sorted per page). */
  private sorted: { changes: number; posts: FakePost[] } | null = null;
  /** Request targets as received (path and query). */
  readonly requests: string[] = [];
  /** Sign answers with this secret instead (a forged or misconfigured answer). */
  answerSecret: string | null = null;
  /** Answer every request with a redirect to this URL. */
  redirectTo: string | null = null;
  /** The plugin's installation id, sent at the top of every page (absent: an older plugin). */
  installationId: string | null = null;
  /** Answer every good request with this answer instead (one captured earlier: a replay). */
  replayAnswer: { header: string; body: string } | null = null;
  /** Answer as a plugin from before `post_id`: the parameter is ignored, the whole listing paged. */
  ignorePostId = false;
  /** Nonces of accepted requests (the plugin keeps them for the signature window). */
  readonly nonces = new Set<string>();
  private server: Server | null = null;
  url = '';

  constructor(
    readonly site: string,
    readonly secret: string,
  ) {}

  /** The restUrl the plugin would send (pretty permalinks). */
  get restUrl(): string {
    return `${this.url}/wp-json/lifeline/v1/`;
  }

  put(post: FakePost): void {
    this.posts.set(post.postId, { modifiedAt: `${new Date().toISOString().slice(0, 19)}Z`, ...post });
  }

  private sortedPosts(): FakePost[] {
    if (this.sorted && this.sorted.changes === this.posts.changes) return this.sorted.posts;
    const posts = [...this.posts.values()].sort((a, b) => a.postId - b.postId);
    this.sorted = { changes: this.posts.changes, posts };
    return posts;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const target = req.url ?? '/';
      this.requests.push(target);
      if (this.redirectTo) {
        res.writeHead(302, { Location: this.redirectTo }).end();
        return;
      }
      const url = new URL(target, 'http://fake');
      if (url.pathname !== '/wp-json/lifeline/v1/posts') {
        res.writeHead(404).end('{}');
        return;
      }
      const { problem, nonce } = verify(
        this.secret,
        req.headers['x-lifeline-signature'] as string | undefined,
        req.headers.host ?? '',
        target,
        this.nonces,
      );
      if (problem) {
        res.writeHead(401, { 'Content-Type': 'application/json' }).end(
          JSON.stringify({
            code: 'lifeline_bad_signature',
            message: `Lifeline signature refused: ${problem}.`,
          }),
        );
        return;
      }
      if (this.replayAnswer) {
        res.writeHead(200, {
          'Content-Type': 'application/json',
          'X-Lifeline-Signature': this.replayAnswer.header,
        });
        res.end(this.replayAnswer.body);
        return;
      }
      const page = Number(url.searchParams.get('page') ?? 1);
      const perPage = Number(url.searchParams.get('per_page') ?? 100);
      // `post_id` (CONTRACT.md §5): that one post, when it is of a listed status; a plugin before it ignored it.
      const only = this.ignorePostId ? null : url.searchParams.get('post_id');
      const one = only === null ? undefined : this.posts.get(Number(only));
      const all = only === null ? this.sortedPosts() : one ? [one] : [];
      const posts = all.slice((page - 1) * perPage, page * perPage).map((p) => ({
        postId: p.postId,
        status: p.status,
        permalink: p.permalink,
        title: p.title ?? `Post ${p.postId}`,
        modifiedAt: p.modifiedAt,
        ...(p.knownCode ? { knownCode: p.knownCode } : {}),
        ...(p.guid ? { guid: p.guid } : {}),
      }));
      const body = JSON.stringify({
        site: this.site,
        page,
        perPage,
        total: all.length,
        totalPages: Math.ceil(all.length / perPage),
        ...(this.installationId ? { installationId: this.installationId } : {}),
        posts,
      });
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-store, private',
        'X-Lifeline-Signature': sign(this.answerSecret ?? this.secret, nonce, body),
      });
      res.end(body);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }
}
