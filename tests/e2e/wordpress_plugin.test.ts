import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { eventually } from '../../devkit/harness/harness.ts';
import {
  listingRequestMessage,
  type SignedKind,
  signKind,
  verifyKindSignature,
} from '../../lib/auth/webhook_signature.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { startWordPress, type WordPressSite } from '../helpers/wordpress_site.ts';

// The WordPress plugin's side of adopting an existing newsroom (integrations/wordpress/CONTRACT.md):
// archive backfill from WP-CLI and from the settings page through WP-Cron, the signed post listing,
// site.permalinks_changed, and scheduled posts. A real WordPress (Debian's package under PHP's built-in server,
// MariaDB) talks to a small receiver in this file that stands in for Lifeline's endpoints and checks every
// signature. `wp` is the real WP-CLI when a wp-cli.phar is at LIFELINE_WP_CLI_PHAR or .cache/wp-cli.phar, and
// otherwise tests/e2e/wordpress/wp_cli_harness.php, which runs the same command class (Debian has no wp-cli).

const SITE = 'e2e-archive';
const SECRET = `whsec_${randomBytes(24).toString('hex')}`;
/** Posts the archive seeds as published; WordPress's own "Hello world!" makes one more. */
const SEEDED = 263;
const PUBLISHED = SEEDED + 1;
const E2E_DIR = join(ROOT, 'tests', 'e2e', 'wordpress');
const PHAR = process.env.LIFELINE_WP_CLI_PHAR ?? join(ROOT, '.cache', 'wp-cli.phar');
const REAL_WP_CLI = PHAR !== 'none' && existsSync(PHAR);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const startedAt = Date.now();
const execFileAsync = promisify(execFile);
/** A dry run's outcomes. */
const WOULD: Record<string, string> = { minted: 'would-mint', kept: 'would-keep', adopted: 'would-adopt' };

// ---------------------------------------------------------------------------------------------------------------
// The receiver: Lifeline's two WordPress endpoints, verifying `t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>`.

interface BatchPost {
  postId: number;
  permalink: string;
  title: string;
  publishedAt: string;
  modifiedAt: string;
  knownShortUrl?: string;
  knownCode?: string;
  guid?: string;
}
interface BatchBody {
  id: string;
  run: string;
  site: string;
  batch: number;
  dryRun: boolean;
  final: boolean;
  total: number;
  restUrl: string;
  installationId?: string;
  posts: BatchPost[];
}
interface EventBody {
  id: string;
  event: string;
  site: string;
  postId?: number;
  permalink?: string;
  occurredAt: string;
  restUrl: string;
  reason?: string;
  installationId?: string;
  knownCode?: string;
  guid?: string;
}
interface BatchResult {
  postId: number;
  outcome: string;
  code?: string;
}
type Reply = { status: number; headers?: Record<string, string>; json?: unknown } | 'hang';
interface Delivery<T> {
  body: T;
  raw: string;
  signed: boolean;
  at: number;
  /** The status answered ('hang' for a held request). */
  status: number | 'hang';
  results?: BatchResult[];
}

/** '' when the header signs `message` with `secret` within ±300 s, otherwise why not. */
/** '' when `header` signs `message` for its kind (v2, as Lifeline checks it; v1 alone does not pass), else why not. */
async function checkSignature(
  header: string | null | undefined,
  kind: SignedKind,
  message: string,
): Promise<string> {
  const check = await verifyKindSignature(SECRET, kind, header, message, Date.now() / 1000);
  return check.ok ? '' : check.reason;
}

/** A v1 signature (what Lifeline sent before listing requests were bound to a host and a nonce). */
function sign(message: string, secret = SECRET, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${message}`).digest('hex')}`;
}

/** A listing request's signature as Lifeline makes it: for GET, the host, the target and a fresh nonce. */
async function signListing(
  target: string,
  o: { secret?: string; t?: number; host?: string; nonce?: string } = {},
): Promise<string> {
  const nonce = o.nonce ?? randomBytes(16).toString('hex');
  const host = o.host ?? new URL(wp.baseUrl).host;
  return signKind(
    o.secret ?? SECRET,
    'listing-request',
    listingRequestMessage('GET', host, target, nonce),
    o.t ?? Date.now() / 1000,
    nonce,
  );
}

class Receiver {
  readonly batches: Delivery<BatchBody>[] = [];
  readonly events: Delivery<EventBody>[] = [];
  readonly unsigned: string[] = [];
  /** Decides a batch's answer; undefined falls through to 202 (attempt counts this batch id's deliveries). */
  planBatch: ((body: BatchBody, attempt: number) => Reply | undefined) | undefined;
  planEvent: ((body: EventBody) => Reply | undefined) | undefined;
  /** Post IDs that have a link (as Lifeline would): a post seen again is "kept". */
  private readonly linked = new Set<number>();
  private readonly held: ServerResponse[] = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    this.url = `http://127.0.0.1:${address.port}`;
  }

  async stop(): Promise<void> {
    this.releaseHeld();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  releaseHeld(): void {
    for (const res of this.held.splice(0)) res.destroy();
  }

  /** The post IDs Lifeline would answer "refused" for (a per-post failure inside an accepted batch). */
  readonly refuse = new Set<number>();

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', this.url).pathname;
    if (req.method !== 'POST' || !path.startsWith('/api/v1/hooks/wordpress')) {
      res.writeHead(404, { 'Content-Type': 'application/problem+json' }).end('{"title":"Not Found"}');
      return;
    }
    const kind = path === '/api/v1/hooks/wordpress/backfill' ? 'backfill' : 'event';
    const problem = await checkSignature(
      req.headers['x-lifeline-signature'] as string | undefined,
      kind,
      raw,
    );
    if (problem) {
      this.unsigned.push(`${path}: ${problem}`);
      res.writeHead(401, { 'Content-Type': 'application/problem+json' }).end(`{"detail":"${problem}"}`);
      return;
    }
    if (path === '/api/v1/hooks/wordpress/backfill') {
      const body = JSON.parse(raw) as BatchBody;
      const attempt = this.batches.filter((b) => b.body.id === body.id).length + 1;
      const delivery: Delivery<BatchBody> = { body, raw, signed: true, at: Date.now(), status: 202 };
      this.batches.push(delivery);
      const reply = this.planBatch?.(body, attempt) ?? this.accept(body);
      if (reply === 'hang') {
        delivery.status = 'hang';
        this.held.push(res);
        return;
      }
      delivery.status = reply.status;
      delivery.results = (reply.json as { results?: BatchResult[] } | undefined)?.results;
      res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.json ?? {}));
      return;
    }
    const body = JSON.parse(raw) as EventBody;
    const delivery: Delivery<EventBody> = { body, raw, signed: true, at: Date.now(), status: 202 };
    this.events.push(delivery);
    const reply = this.planEvent?.(body) ?? { status: 202, json: { workflowId: `publish:${body.site}` } };
    if (reply === 'hang') throw new Error('events are never held');
    delivery.status = reply.status;
    res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.json ?? {}));
  }

  /** 202 with one result per post, as the contract's server answers (dry runs change nothing). */
  accept(body: BatchBody): Reply {
    const results: BatchResult[] = body.posts.map((p) => {
      if (this.refuse.has(p.postId)) return { postId: p.postId, outcome: 'refused' };
      const fresh = !this.linked.has(p.postId);
      if (!body.dryRun) this.linked.add(p.postId);
      const outcome = !fresh ? 'kept' : p.knownShortUrl ? 'adopted' : 'minted';
      return {
        postId: p.postId,
        outcome: body.dryRun ? WOULD[outcome]! : outcome,
        code: `c${p.postId}`,
      };
    });
    return {
      status: 202,
      json: { workflowId: `backfill:${body.site}:${body.run}`, accepted: body.posts.length, results },
    };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// WordPress, WP-CLI and the admin screens.

interface Seeded {
  published: { id: number; date: string; permalink: string; title: string }[];
  draft: number[];
  pending: number[];
  private: number[];
  future: number[];
  page: number;
  autoDraft: number;
  revisions: number[];
  knownShort: Record<string, string>;
  brokenShort: number;
  ampersand: number;
}

const receiver = new Receiver();
let wp: WordPressSite;
let seeded: Seeded;
let publishedIds: number[];
let cookie = '';

/** The env a CLI process needs to load this run's WordPress (harness, helpers, or real WP-CLI). */
function cliEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    LIFELINE_E2E_WP_HOST: new URL(wp.baseUrl).host,
    LIFELINE_E2E_WP_CONFIG: wp.configName,
    // Debian's wp-config.php reads it from $_SERVER, which a CLI process fills from its environment.
    WORDPRESS_CONFIG: wp.configName,
  };
}

function wpArgs(args: string[]): string[] {
  return REAL_WP_CLI
    ? [PHAR, '--allow-root', '--path=/usr/share/wordpress', `--url=${wp.baseUrl}`, ...args]
    : [join(E2E_DIR, 'wp_cli_harness.php'), ...args];
}

interface CliRun {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/** Starts `wp …` (`wp` itself is implied). */
function startWp(args: string[]): CliRun {
  const child = spawn('php', wpArgs(args), { cwd: ROOT, env: cliEnv() });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    stdout += d;
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const done = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

async function wpCli(args: string[]) {
  return startWp(args).done;
}

async function wpOk(args: string[]) {
  const out = await wpCli(args);
  assert.equal(out.code, 0, `wp ${args.join(' ')} failed:\n${out.stdout}\n${out.stderr}`);
  assert.doesNotMatch(`${out.stdout}${out.stderr}`, /PHP (Fatal|Warning|Notice|Deprecated)/);
  return out;
}

interface RunState {
  run_id: string;
  status: string;
  mode: string;
  since: string;
  batch_size: number;
  max_id: number;
  total: number;
  cursor: number;
  batch: number;
  sent: number;
  minted: number;
  kept: number;
  adopted: number;
  failed: number;
  failures: { postId: number; outcome: string }[];
  last_error: string;
  active: boolean;
}

async function backfillState(): Promise<RunState | null> {
  const out = await wpOk(['lifeline', 'status', '--format=json']);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as RunState | null;
}

/** Runs a helper in tests/e2e/wordpress/, asynchronously: it may call the receiver in this very process. */
async function php(script: string, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('php', [join(E2E_DIR, script), ...args], {
    cwd: ROOT,
    env: cliEnv(),
    encoding: 'utf8',
  });
  return stdout;
}

async function logIn(): Promise<string> {
  const res = await fetch(`${wp.baseUrl}/wp-login.php`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Cookie: 'wordpress_test_cookie=WP%20Cookie%20check',
    },
    body: new URLSearchParams({
      log: 'admin',
      pwd: wp.adminPassword,
      'wp-submit': 'Log In',
      redirect_to: `${wp.baseUrl}/wp-admin/`,
      testcookie: '1',
    }),
  });
  await res.arrayBuffer();
  assert.equal(res.status, 302, 'logged in');
  const jar = new Map<string, string>();
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

/** An admin screen as the logged-in administrator (redirects are returned, not followed). */
async function admin(path: string, form?: Record<string, string>) {
  const res = await fetch(`${wp.baseUrl}${path}`, {
    method: form ? 'POST' : 'GET',
    redirect: 'manual',
    headers: {
      Cookie: cookie,
      ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form ? { body: new URLSearchParams(form) } : {}),
  });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
}

/** The nonce inside the form whose id (or action) is given. */
function nonceIn(html: string, marker: string): string {
  const at = html.indexOf(marker);
  assert.ok(at >= 0, `the page has ${marker}`);
  const m = /name="_wpnonce" value="([0-9a-f]+)"/.exec(html.slice(at));
  assert.ok(m, `a nonce after ${marker}`);
  return m[1]!;
}

function settingsText(html: string): string {
  const start = html.indexOf('id="lifeline-backfill"');
  return html
    .slice(start, html.indexOf('</div>', start))
    .replace(/<input type="submit"[^>]*value="([^"]*)"[^>]*>/g, ' [$1] ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ');
}

async function pressSettingsButton(formId: string, action: string, extra: Record<string, string> = {}) {
  const page = await admin('/wp-admin/options-general.php?page=lifeline');
  assert.equal(page.status, 200);
  const res = await admin('/wp-admin/admin-post.php', {
    action,
    _wpnonce: nonceIn(page.html, `id="${formId}"`),
    _wp_http_referer: '/wp-admin/options-general.php?page=lifeline',
    ...extra,
  });
  assert.equal(res.status, 302, `${action} redirects back`);
  assert.match(res.location ?? '', /options-general\.php\?page=lifeline/);
}

/** The backfill section of Settings → Lifeline, as text (buttons as [label]). */
async function settingsPage(): Promise<string> {
  const page = await admin('/wp-admin/options-general.php?page=lifeline');
  assert.equal(page.status, 200);
  return settingsText(page.html);
}

/** A signed GET of the listing at `target` (path and query as sent), by default signed as Lifeline signs it. */
async function listing(target: string, given?: string | null) {
  const signature = given === undefined ? await signListing(target) : given;
  const res = await fetch(`${wp.baseUrl}${target}`, {
    headers: signature === null ? {} : { 'X-Lifeline-Signature': signature },
  });
  const raw = await res.text();
  const nonce = /,n=([0-9a-f]+),/.exec(signature ?? '')?.[1] ?? '';
  return {
    /** '' when the answer is signed for this request (its nonce), else why not. */
    answerCheck: () =>
      checkSignature(res.headers.get('x-lifeline-signature'), 'listing-answer', `${nonce}\n${raw}`),
    status: res.status,
    raw,
    body: JSON.parse(raw) as {
      site: string;
      page: number;
      perPage: number;
      total: number;
      totalPages: number;
      installationId?: string;
      posts: {
        postId: number;
        status: string;
        permalink: string;
        title: string;
        modifiedAt: string;
        knownCode?: string;
        guid?: string;
      }[];
      code?: string;
      message?: string;
    },
    signature: res.headers.get('x-lifeline-signature'),
    cacheControl: res.headers.get('cache-control'),
  };
}

/** The acknowledged (202) batches' posts, concatenated. */
function acknowledgedIds(batches: Delivery<BatchBody>[]): number[] {
  return batches.filter((b) => b.status === 202).flatMap((b) => b.body.posts.map((p) => p.postId));
}

/** The outcome counts the receiver answered for these batches (what the plugin must have counted). */
function tally(batches: Delivery<BatchBody>[]) {
  const counts = { minted: 0, kept: 0, adopted: 0, failed: 0 };
  for (const b of batches) {
    if (b.status !== 202) continue;
    for (const r of b.results ?? []) {
      const bucket = r.outcome.replace(/^would-/, '');
      if (bucket === 'mint' || bucket === 'minted') counts.minted++;
      else if (bucket === 'keep' || bucket === 'kept') counts.kept++;
      else if (bucket === 'adopt' || bucket === 'adopted') counts.adopted++;
      else counts.failed++;
    }
  }
  return counts;
}

before(async () => {
  await receiver.start();
  wp = await startWordPress({ lifelineUrl: receiver.url, siteId: SITE, secret: SECRET, apiKey: 'unused' });
  seeded = JSON.parse((await php('seed_archive.php', [String(SEEDED)])).trim().split('\n').at(-1)!) as Seeded;
  const hello = wp.mysql(
    "SELECT ID FROM wp_posts WHERE post_name = 'hello-world' AND post_status = 'publish'",
  );
  assert.equal(hello.length, 1, "WordPress's own first post");
  publishedIds = [Number(hello[0]![0]), ...seeded.published.map((p) => p.id)].sort((a, b) => a - b);
  assert.equal(publishedIds.length, PUBLISHED);
  assert.equal(receiver.events.length, 0, 'the seeded archive predates the plugin: no events');
  cookie = await logIn();
  process.stderr.write(
    `  WP-CLI: ${REAL_WP_CLI ? `real (${PHAR})` : 'tests/e2e/wordpress/wp_cli_harness.php'}\n`,
  );
});

after(async () => {
  await wp?.stop();
  await receiver.stop();
  process.stderr.write(
    `  wordpress_plugin e2e: ${((Date.now() - startedAt) / 1000).toFixed(1)} s (setup included)\n`,
  );
});

describe('WordPress plugin: adopting an existing newsroom', () => {
  test('wp lifeline backfill --dry-run asks about every published post and keeps no state', async () => {
    const from = receiver.batches.length;
    const out = await wpOk(['lifeline', 'backfill', '--dry-run']);
    const batches = receiver.batches.slice(from);
    assert.equal(batches.length, 3, 'default batch size 100');
    const run = batches[0]!.body.run;
    assert.match(run, UUID);
    assert.deepEqual(
      batches.map((b) => [b.body.id, b.body.batch, b.body.dryRun, b.body.final, b.body.posts.length]),
      [
        [`${run}:1`, 1, true, false, 100],
        [`${run}:2`, 2, true, false, 100],
        [`${run}:3`, 3, true, true, PUBLISHED - 200],
      ],
    );
    assert.deepEqual(acknowledgedIds(batches), publishedIds);
    assert.ok(batches.every((b) => b.signed && b.body.total === PUBLISHED && b.body.site === SITE));
    const t = tally(batches);
    assert.match(
      out.stdout,
      new RegExp(
        `Dry run finished: asked about ${PUBLISHED} post\\(s\\) in 3 batch\\(es\\); would mint ${t.minted}, would keep 0, would adopt ${t.adopted}, failed 0\\. Nothing was changed\\.`,
      ),
    );
    assert.deepEqual(wp.mysql("SELECT COUNT(*) FROM wp_options WHERE option_name = 'lifeline_backfill'"), [
      ['0'],
    ]);
    assert.equal(await backfillState(), null);
  });

  test('wp lifeline backfill sends exactly the published posts, in ID order, in signed batches of --batch-size, and waits out 429/503 Retry-After', async () => {
    const from = receiver.batches.length;
    const refused = publishedIds[7]!;
    receiver.refuse.add(refused);
    receiver.planBatch = (body, attempt) => {
      if (attempt > 1) return undefined;
      if (body.batch === 2)
        return { status: 429, headers: { 'Retry-After': '2' }, json: { title: 'Too Many Requests' } };
      if (body.batch === 4)
        return { status: 503, headers: { 'Retry-After': '1' }, json: { title: 'Service Unavailable' } };
      return undefined;
    };
    let out: Awaited<ReturnType<typeof wpOk>>;
    try {
      out = await wpOk(['lifeline', 'backfill', '--batch-size=50']);
    } finally {
      receiver.planBatch = undefined;
      receiver.refuse.clear();
    }
    const batches = receiver.batches.slice(from);
    const run = batches[0]!.body.run;
    assert.match(run, UUID);
    assert.ok(batches.every((b) => b.body.run === run && b.signed));
    assert.deepEqual(
      batches.map((b) => [b.body.batch, b.status, b.body.posts.length, b.body.final]),
      [
        [1, 202, 50, false],
        [2, 429, 50, false],
        [2, 202, 50, false],
        [3, 202, 50, false],
        [4, 503, 50, false],
        [4, 202, 50, false],
        [5, 202, 50, false],
        [6, 202, PUBLISHED - 250, true],
      ],
    );
    // The same batch was sent again, unchanged but signed afresh, no sooner than Retry-After said.
    for (const [n, seconds] of [
      [2, 2],
      [4, 1],
    ] as const) {
      const [first, second] = batches.filter((b) => b.body.batch === n);
      assert.deepEqual(second!.body, first!.body);
      assert.ok(
        second!.at - first!.at >= seconds * 1000,
        `batch ${n} resent after ${second!.at - first!.at} ms`,
      );
    }
    assert.equal((out!.stderr.match(/Warning: Lifeline is busy/g) ?? []).length, 2);

    // Exactly the published posts (no draft, pending, private, scheduled post, page or auto-draft), ID order.
    const acknowledged = acknowledgedIds(batches);
    assert.deepEqual(acknowledged, publishedIds);
    const body = batches[0]!.body;
    assert.equal(body.id, `${run}:1`);
    assert.equal(body.site, SITE);
    assert.equal(body.dryRun, false);
    assert.equal(body.total, PUBLISHED);
    assert.equal(body.restUrl, `${wp.baseUrl}/wp-json/lifeline/v1/`);
    const sent = new Map(batches.flatMap((b) => b.body.posts.map((p) => [p.postId, p] as const)));
    for (const p of seeded.published) {
      const got = sent.get(p.id)!;
      assert.equal(got.permalink, p.permalink);
      assert.equal(got.publishedAt, p.date);
      assert.equal(got.title, p.title);
      assert.match(got.modifiedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(got.knownShortUrl, seeded.knownShort[String(p.id)], `knownShortUrl of ${p.id}`);
    }
    assert.equal(sent.get(seeded.ampersand)!.title, 'Q&A: Tom & Jerry', 'the title decoded');
    assert.ok(!('knownShortUrl' in sent.get(seeded.brokenShort)!), 'a broken meta value is not sent');
    assert.ok(Object.keys(seeded.knownShort).length >= 7);

    const t = tally(batches);
    assert.equal(t.failed, 1);
    assert.match(
      out!.stdout,
      new RegExp(
        `Success: Backfill finished: sent ${PUBLISHED} post\\(s\\) in 6 batch\\(es\\); minted ${t.minted}, kept ${t.kept}, adopted ${t.adopted}, failed 1\\.`,
      ),
    );
    const state = (await backfillState())!;
    assert.equal(state.run_id, run);
    assert.equal(state.status, 'finished');
    assert.equal(state.cursor, publishedIds.at(-1));
    assert.deepEqual([state.batch, state.sent, state.total], [6, PUBLISHED, PUBLISHED]);
    assert.deepEqual(state.failures, [{ postId: refused, outcome: 'refused' }]);
    assert.equal(state.active, false);
    assert.match(state.last_error, /HTTP 503/);
  });

  test('a backfill killed mid-run (SIGKILL) resumes from the cursor: no post missing, only the unacknowledged batch twice', async () => {
    const from = receiver.batches.length;
    let hung: () => void = () => {};
    const batchThreeArrived = new Promise<void>((resolve) => {
      hung = resolve;
    });
    receiver.planBatch = (body, attempt) => {
      if (body.batch === 3 && attempt === 1) {
        hung();
        return 'hang';
      }
      return undefined;
    };
    const first = startWp(['lifeline', 'backfill', '--restart', '--batch-size=40']);
    try {
      await batchThreeArrived;
      first.child.kill('SIGKILL');
      const killed = await first.done;
      assert.equal(killed.signal, 'SIGKILL');
    } finally {
      receiver.planBatch = undefined;
      receiver.releaseHeld();
    }
    const run = receiver.batches[from]!.body.run;
    const interrupted = (await backfillState())!;
    assert.equal(interrupted.run_id, run);
    assert.deepEqual(
      [interrupted.status, interrupted.mode, interrupted.active, interrupted.batch, interrupted.sent],
      ['running', 'cli', false, 2, 80],
    );
    assert.equal(interrupted.cursor, publishedIds[79]);

    const resumed = await wpOk(['lifeline', 'backfill']);
    assert.match(
      resumed.stdout,
      new RegExp(`Resuming run ${run} after post ${publishedIds[79]} \\(batch 2\\)`),
    );
    const batches = receiver.batches.slice(from);
    assert.ok(
      batches.every((b) => b.body.run === run && b.signed),
      'one run throughout',
    );
    assert.deepEqual(
      batches.map((b) => [b.body.batch, b.status]),
      [
        [1, 202],
        [2, 202],
        [3, 'hang'],
        [3, 202],
        [4, 202],
        [5, 202],
        [6, 202],
        [7, 202],
      ],
    );
    const all = batches.flatMap((b) => b.body.posts.map((p) => p.postId));
    assert.deepEqual(
      [...new Set(all)].sort((a, b) => a - b),
      publishedIds,
      'no post missing',
    );
    const duplicates = all.filter((id, i) => all.indexOf(id) !== i);
    assert.deepEqual(duplicates, publishedIds.slice(80, 120), 'only the unacknowledged batch, once more');
    assert.ok(batches.at(-1)!.body.final && batches.filter((b) => b.body.final).length === 1);
    assert.equal((await backfillState())!.status, 'finished');
  });

  test('--since sends only posts published on or after the day (GMT); bad flags are refused and change nothing', async () => {
    const from = receiver.batches.length;
    for (const [flag, message] of [
      ['--batch-size=0', /batch size must be a whole number from 1 to 500, not "0"/],
      ['--batch-size=501', /batch size must be a whole number from 1 to 500/],
      ['--since=2024-02-30', /since must be a day written YYYY-MM-DD, not "2024-02-30"/],
    ] as const) {
      const out = await wpCli(['lifeline', 'backfill', flag]);
      assert.equal(out.code, 1, flag);
      assert.match(out.stderr, message);
    }
    assert.equal(receiver.batches.length, from, 'nothing sent');
    assert.equal((await backfillState())!.status, 'finished', 'the state is untouched');

    await wpOk(['lifeline', 'backfill', '--restart', '--since=2024-01-01', '--batch-size=500']);
    const batches = receiver.batches.slice(from);
    const hello = wp.mysql(
      "SELECT ID FROM wp_posts WHERE post_name = 'hello-world' AND post_date_gmt >= '2024-01-01 00:00:00'",
    );
    const expected = [
      ...hello.map(([id]) => Number(id)),
      ...seeded.published.filter((p) => p.date >= '2024-01-01T00:00:00Z').map((p) => p.id),
    ].sort((a, b) => a - b);
    assert.ok(expected.length > 50 && expected.length < PUBLISHED);
    assert.equal(batches.length, 1);
    assert.deepEqual(acknowledgedIds(batches), expected);
    assert.equal(batches[0]!.body.total, expected.length);
    assert.equal(batches[0]!.body.final, true);
    assert.equal((await backfillState())!.since, '2024-01-01');
  });

  test('the settings button backfills the archive through self-rescheduling WP-Cron ticks, with progress, Stop and resume', async () => {
    const from = receiver.batches.length;
    assert.match(await settingsPage(), /Finished: \d+ \/ \d+ posts sent/);
    await pressSettingsButton('lifeline-backfill-start', 'lifeline_backfill_start');
    assert.equal(receiver.batches.length, from, 'nothing is sent before WP-Cron runs');
    const started = (await backfillState())!;
    assert.deepEqual(
      [started.status, started.mode, started.total, started.sent],
      ['running', 'cron', PUBLISHED, 0],
    );

    await wp.runCron();
    await eventually(async () => (receiver.batches.length > from ? true : undefined), {
      what: 'the first batch',
    });
    assert.equal(receiver.batches.length, from + 1, 'one batch per tick (lifeline-e2e.php)');
    assert.match(
      await settingsPage(),
      new RegExp(`Running \\(WP-Cron\\): 100 / ${PUBLISHED} posts sent in 1 batch\\(es\\)\\.`),
    );

    await pressSettingsButton('lifeline-backfill-stop', 'lifeline_backfill_stop');
    for (let i = 0; i < 3; i++) await wp.runCron();
    assert.equal(receiver.batches.length, from + 1, 'a stopped run sends nothing');
    const stopped = await settingsPage();
    assert.match(stopped, new RegExp(`Stopped: 100 / ${PUBLISHED} posts sent in 1 batch\\(es\\)\\.`));
    assert.match(stopped, /\[Resume the backfill\]/);

    // Resumed; Lifeline answers the next batch with 503 + Retry-After once: the tick reschedules itself after it.
    receiver.planBatch = (body, attempt) =>
      body.batch === 2 && attempt === 1
        ? { status: 503, headers: { 'Retry-After': '1' }, json: { detail: 'not now' } }
        : undefined;
    try {
      await pressSettingsButton('lifeline-backfill-start', 'lifeline_backfill_start');
      await eventually(
        async () => {
          await wp.runCron();
          return (await backfillState())?.status === 'finished' ? true : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 200, what: 'the cron-driven run to finish' },
      );
    } finally {
      receiver.planBatch = undefined;
    }
    const batches = receiver.batches.slice(from);
    const run = batches[0]!.body.run;
    assert.ok(batches.every((b) => b.body.run === run && b.signed));
    assert.deepEqual(
      batches.map((b) => [b.body.batch, b.status, b.body.final]),
      [
        [1, 202, false],
        [2, 503, false],
        [2, 202, false],
        [3, 202, true],
      ],
    );
    const [refusedTry, retried] = batches.filter((b) => b.body.batch === 2);
    assert.ok(retried!.at - refusedTry!.at >= 1000, 'Retry-After waited out');
    assert.deepEqual(acknowledgedIds(batches), publishedIds);
    const done = await settingsPage();
    assert.match(done, new RegExp(`Finished: ${PUBLISHED} / ${PUBLISHED} posts sent in 3 batch\\(es\\)\\.`));
    assert.match(done, /Last error: HTTP 503: not now/);
    assert.match(done, /\[Backfill the archive\]/);
    assert.deepEqual(
      wp.mysql(
        "SELECT COUNT(*) FROM wp_options WHERE option_name = 'cron' AND option_value LIKE '%lifeline_backfill_tick%'",
      ),
      [['0']],
      'no tick left',
    );
  });

  test('the signed listing pages through every post with its status; unsigned, badly signed and stale requests are refused', async () => {
    // A published post, then trashed: the listing shows "trash" with the permalink it had.
    const created = await wp.rest<{ id: number; link: string }>('/wp/v2/posts', {
      method: 'POST',
      json: { title: 'Soon in the trash', status: 'publish' },
    });
    assert.equal(created.status, 201);
    const trashed = await wp.rest<{ status: string }>(`/wp/v2/posts/${created.body.id}`, {
      method: 'DELETE',
    });
    assert.equal(trashed.body.status, 'trash');

    const expected = wp
      .mysql(
        "SELECT ID, post_status FROM wp_posts WHERE post_type = 'post' AND post_status IN ('publish','future','draft','pending','private','trash') ORDER BY ID",
      )
      .map(([id, status]) => ({ postId: Number(id), status }));
    const listed: Awaited<ReturnType<typeof listing>>['body']['posts'] = [];
    let totalPages = 1;
    for (let page = 1; page <= totalPages; page++) {
      const res = await listing(`/wp-json/lifeline/v1/posts?page=${page}&per_page=100`);
      assert.equal(res.status, 200, res.raw);
      assert.equal(await res.answerCheck(), '', `page ${page}'s answer is signed by the plugin`);
      assert.match(res.cacheControl ?? '', /no-store/);
      assert.deepEqual(
        [res.body.site, res.body.page, res.body.perPage, res.body.total],
        [SITE, page, 100, expected.length],
      );
      totalPages = res.body.totalPages;
      listed.push(...res.body.posts);
    }
    assert.equal(totalPages, Math.ceil(expected.length / 100));
    assert.deepEqual(
      listed.map((p) => ({ postId: p.postId, status: p.status })),
      expected,
      'every post once, by ID',
    );
    const byId = new Map(listed.map((p) => [p.postId, p]));
    assert.equal(byId.get(created.body.id)!.status, 'trash');
    assert.equal(byId.get(created.body.id)!.permalink, created.body.link, 'the permalink it had');
    for (const status of ['draft', 'pending', 'private', 'future'] as const) {
      assert.ok(seeded[status].length > 0);
      for (const id of seeded[status]) assert.equal(byId.get(id)?.status, status);
    }
    for (const p of seeded.published) {
      assert.equal(byId.get(p.id)?.status, 'publish');
      assert.equal(byId.get(p.id)?.permalink, p.permalink);
    }
    assert.equal(byId.get(seeded.ampersand)!.title, 'Q&A: Tom & Jerry');
    for (const absent of [seeded.page, seeded.autoDraft, ...seeded.revisions])
      assert.ok(!byId.has(absent), `post ${absent} is not listed`);
    assert.ok(seeded.revisions.length > 0, 'the archive has a revision');

    // modified_after: at or after that second.
    const since = '2024-01-01T00:00:00Z';
    const recent = await listing(`/wp-json/lifeline/v1/posts?per_page=500&modified_after=${since}`);
    assert.equal(recent.status, 200, recent.raw);
    const expectRecent = wp
      .mysql(
        "SELECT ID FROM wp_posts WHERE post_type = 'post' AND post_status IN ('publish','future','draft','pending','private','trash') AND post_modified_gmt >= '2024-01-01 00:00:00' ORDER BY ID",
      )
      .map(([id]) => Number(id));
    assert.deepEqual(
      recent.body.posts.map((p) => p.postId),
      expectRecent,
    );
    assert.ok(expectRecent.length > 0 && expectRecent.length < expected.length);

    // post_id: that one post whatever its listed status (the article behind a dead link), none when it is not
    // listed (a revision), and a bad value refused.
    const one = await listing(`/wp-json/lifeline/v1/posts?post_id=${created.body.id}`);
    assert.equal(one.status, 200, one.raw);
    assert.equal(await one.answerCheck(), '', 'signed like every page');
    assert.deepEqual(
      [one.body.total, one.body.posts.map((p) => [p.postId, p.status, p.permalink])],
      [1, [[created.body.id, 'trash', created.body.link]]],
    );
    const notListed = await listing(`/wp-json/lifeline/v1/posts?post_id=${seeded.revisions[0]}`);
    assert.deepEqual([notListed.status, notListed.body.total, notListed.body.posts], [200, 0, []]);
    assert.equal((await listing('/wp-json/lifeline/v1/posts?post_id=0')).status, 400);

    // Refusals: 401 with a JSON error, and nothing listed.
    const target = '/wp-json/lifeline/v1/posts?page=2&per_page=100';
    const now = Math.floor(Date.now() / 1000);
    const replayed = await signListing(target);
    assert.equal((await listing(target, replayed)).status, 200, 'the first use of a nonce');
    for (const [what, header] of [
      ['unsigned', null],
      ['signed with another secret', await signListing(target, { secret: 'not-the-secret' })],
      ['stale', await signListing(target, { t: now - 330 })],
      ['from the future', await signListing(target, { t: now + 330 })],
      ['signed for another query', await signListing('/wp-json/lifeline/v1/posts?page=1&per_page=100')],
      ['signed for another host', await signListing(target, { host: 'wp.other.example' })],
      ['replayed (a nonce already used)', replayed],
      ['v1, bound to neither host nor nonce', sign(`GET ${target}`)],
      ['malformed', 'v1=abc'],
    ] as const) {
      const res = await listing(target, header);
      assert.equal(res.status, 401, what);
      assert.equal(res.body.code, 'lifeline_bad_signature', what);
      if (what.startsWith('replayed')) assert.match(res.body.message ?? '', /replayed/);
      assert.ok(!('posts' in res.body), what);
    }
    const tooMany = await listing('/wp-json/lifeline/v1/posts?per_page=501');
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.body.message ?? '', /per_page must be a whole number from 1 to 500/);
    const badTime = await listing('/wp-json/lifeline/v1/posts?modified_after=yesterday');
    assert.equal(badTime.status, 400);
    assert.match(badTime.body.message ?? '', /modified_after must be an ISO 8601 date-time with a zone/);
  });

  test('changing the permalink structure or the home URL queues one signed site.permalinks_changed each, through the outbox', async () => {
    const permalinkEvents = () => receiver.events.filter((e) => e.body.event === 'site.permalinks_changed');
    const before = permalinkEvents().length;

    // The Permalinks screen: /%postname%/ → /%year%/%postname%/.
    const screen = await admin('/wp-admin/options-permalink.php');
    const saved = await admin('/wp-admin/options-permalink.php', {
      _wpnonce: nonceIn(screen.html, 'name="form"'),
      _wp_http_referer: '/wp-admin/options-permalink.php',
      selection: 'custom',
      permalink_structure: '/%year%/%postname%/',
      category_base: '',
      tag_base: '',
      submit: 'Save Changes',
    });
    assert.equal(saved.status, 302);
    const structure = permalinkEvents().slice(before);
    assert.equal(structure.length, 1, 'one event for one change');
    const event = structure[0]!;
    assert.ok(event.signed);
    assert.match(event.body.id, UUID);
    assert.deepEqual(
      {
        event: event.body.event,
        site: event.body.site,
        restUrl: event.body.restUrl,
        reason: event.body.reason,
      },
      {
        event: 'site.permalinks_changed',
        site: SITE,
        restUrl: `${wp.baseUrl}/wp-json/lifeline/v1/`,
        reason: 'permalink_structure',
      },
    );
    assert.match(event.body.occurredAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.ok(!('postId' in event.body));
    const first = seeded.published[0]!;
    const moved = await listing('/wp-json/lifeline/v1/posts?per_page=10');
    assert.equal(
      moved.body.posts.find((p) => p.postId === first.id)?.permalink,
      first.permalink.replace(wp.baseUrl, `${wp.baseUrl}/${first.date.slice(0, 4)}`),
    );

    // The home URL, while Lifeline is down: the event waits in the outbox and arrives after WP-Cron.
    receiver.planEvent = () => ({ status: 503, headers: { 'Retry-After': '1' }, json: { detail: 'down' } });
    try {
      assert.deepEqual(JSON.parse(await php('set_option.php', ['home', `${wp.baseUrl}/newsroom`])), {
        changed: true,
      });
      assert.deepEqual(wp.mysql('SELECT event, post_id FROM wp_lifeline_outbox'), [
        ['site.permalinks_changed', '0'],
      ]);
    } finally {
      receiver.planEvent = undefined;
    }
    await eventually(
      async () => {
        await wp.runCron();
        return wp.mysql('SELECT COUNT(*) FROM wp_lifeline_outbox')[0]![0] === '0' ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 300, what: 'the queued event to be delivered' },
    );
    const home = permalinkEvents().filter((e) => e.body.reason === 'home');
    assert.deepEqual(
      home.map((e) => e.status),
      [503, 202],
      'refused once while down, then delivered',
    );
    assert.equal(home[0]!.body.id, home[1]!.body.id, 'the same event, resent');
    // WP_HOME (the e2e config) still decides home_url(), so the listing stays where it was.
    assert.equal(home[1]!.body.restUrl, `${wp.baseUrl}/wp-json/lifeline/v1/`);

    // Not a change: a trailing slash.
    const count = permalinkEvents().length;
    assert.deepEqual(JSON.parse(await php('set_option.php', ['home', `${wp.baseUrl}/`])), { changed: true });
    assert.equal(permalinkEvents().length, count, 'no event for a trailing slash');

    // Plain permalinks: restUrl becomes WordPress's index.php?rest_route= form; the listing URL built from it as
    // CONTRACT.md says ("posts", then the query joined with &) is signed over that request target as sent.
    const screen2 = await admin('/wp-admin/options-permalink.php');
    await admin('/wp-admin/options-permalink.php', {
      _wpnonce: nonceIn(screen2.html, 'name="form"'),
      _wp_http_referer: '/wp-admin/options-permalink.php',
      selection: '',
      permalink_structure: '',
      category_base: '',
      tag_base: '',
      submit: 'Save Changes',
    });
    const plain = permalinkEvents().at(-1)!;
    assert.equal(permalinkEvents().length, count + 1);
    assert.equal(plain.body.restUrl, `${wp.baseUrl}/index.php?rest_route=/lifeline/v1/`);
    const plainTarget = `${new URL(`${plain.body.restUrl}posts`).pathname}${new URL(`${plain.body.restUrl}posts`).search}&page=1&per_page=2`;
    assert.equal(plainTarget, '/index.php?rest_route=/lifeline/v1/posts&page=1&per_page=2');
    const plainList = await listing(plainTarget);
    assert.equal(plainList.status, 200, plainList.raw);
    assert.equal(await plainList.answerCheck(), '');
    assert.equal(plainList.body.posts[0]!.permalink, `${wp.baseUrl}/?p=${plainList.body.posts[0]!.postId}`);
    const wrongTarget = await listing(
      plainTarget,
      await signListing('/wp-json/lifeline/v1/posts?page=1&per_page=2'),
    );
    assert.equal(wrongTarget.status, 401);

    // Back to /%postname%/ for the tests after this one.
    const screen3 = await admin('/wp-admin/options-permalink.php');
    await admin('/wp-admin/options-permalink.php', {
      _wpnonce: nonceIn(screen3.html, 'name="form"'),
      _wp_http_referer: '/wp-admin/options-permalink.php',
      selection: 'custom',
      permalink_structure: '/%postname%/',
      category_base: '',
      tag_base: '',
      submit: 'Save Changes',
    });
    assert.equal(permalinkEvents().length, count + 2);
    assert.equal(permalinkEvents().at(-1)!.body.restUrl, `${wp.baseUrl}/wp-json/lifeline/v1/`);
    assert.deepEqual(receiver.unsigned, [], 'every request to Lifeline was correctly signed');
  });

  test('a scheduled post going live from WP-Cron sends post.published exactly once, with restUrl', async () => {
    // WordPress publishes at once anything dated less than a minute ahead: schedule it two minutes out, then
    // make_due.php moves its date and its publish_future_post event to now (see there).
    const when = new Date(Date.now() + 120_000).toISOString().slice(0, 19);
    const created = await wp.rest<{ id: number; status: string }>('/wp/v2/posts', {
      method: 'POST',
      json: { title: 'Embargoed until noon', status: 'future', date_gmt: when },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.status, 'future');
    const id = created.body.id;
    const published = () =>
      receiver.events.filter((e) => e.body.postId === id && e.body.event === 'post.published');
    assert.equal(receiver.events.filter((e) => e.body.postId === id).length, 0, 'scheduling sends nothing');
    await wp.runCron();
    assert.equal(
      receiver.events.filter((e) => e.body.postId === id).length,
      0,
      'nor does WP-Cron before its time',
    );
    await php('make_due.php', [String(id)]);

    const live = await eventually(
      async () => {
        await wp.runCron();
        const post = await wp.rest<{ status: string; link: string }>(`/wp/v2/posts/${id}`);
        return post.body.status === 'publish' ? post.body : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'WP-Cron to publish the scheduled post' },
    );
    await wp.runCron();
    await wp.runCron();
    const events = published();
    assert.equal(events.length, 1, 'post.published exactly once');
    assert.ok(events[0]!.signed);
    assert.equal(events[0]!.body.permalink, live.link);
    assert.equal(events[0]!.body.restUrl, `${wp.baseUrl}/wp-json/lifeline/v1/`);
    assert.equal(receiver.events.filter((e) => e.body.postId === id).length, 1, 'and nothing else');
    assert.deepEqual(receiver.unsigned, []);
    assert.equal(wp.serverLog().match(/PHP (Fatal|Warning|Notice|Deprecated)/), null, wp.serverLog());
  });

  test('a post keeps its code and names it (knownCode, guid) on events, backfill rows and listing rows, with one installation id on every message; an import sends no events', async () => {
    // A first run: Lifeline (the receiver) answers each post's code, c<post ID>, and each post keeps it.
    await wpOk(['lifeline', 'backfill', '--restart', '--batch-size=500']);

    // One installation id, made once, on every message the plugin sent so far.
    const installation = wp.mysql(
      "SELECT option_value FROM wp_options WHERE option_name = 'lifeline_installation_id'",
    )[0]?.[0];
    assert.match(installation ?? '', UUID, 'the installation id is a UUID v4 kept in an option');
    assert.ok(receiver.batches.length > 0);
    for (const b of receiver.batches) assert.equal(b.body.installationId, installation, `batch ${b.body.id}`);
    for (const e of receiver.events) assert.equal(e.body.installationId, installation, e.body.event);

    // Plants: a post exported by plugin 1.1 (only its short URL, on Lifeline's host), one whose short URL is on
    // another host, and a copy made by a duplicate-post tool (every meta key copied): neither copy claims it.
    const [legacy, foreign, original, copy] = seeded.published.slice(40, 44).map((p) => p.id) as [
      number,
      number,
      number,
      number,
    ];
    await php('set_post_meta.php', [String(legacy), '_lifeline_code']);
    await php('set_post_meta.php', [String(legacy), '_lifeline_short_url', `${receiver.url}/old${legacy}`]);
    await php('set_post_meta.php', [String(foreign), '_lifeline_code']);
    await php('set_post_meta.php', [String(foreign), '_lifeline_short_url', `https://bit.ly/x${foreign}`]);
    await php('set_post_meta.php', [String(copy), '_lifeline_code', `c${original}`]);

    // A backfill sends each post's claim and GUID; the codes Lifeline answers are kept with the posts.
    const from = receiver.batches.length;
    await wpOk(['lifeline', 'backfill', '--restart', '--batch-size=500']);
    const rows = new Map(
      receiver.batches.slice(from).flatMap((b) => b.body.posts.map((p) => [p.postId, p] as const)),
    );
    const guids = new Map(
      wp.mysql("SELECT ID, guid FROM wp_posts WHERE post_type = 'post'").map(([id, g]) => [Number(id), g]),
    );
    // Every published post (earlier tests may have published more than the seeded archive).
    const publishedNow = wp
      .mysql("SELECT ID FROM wp_posts WHERE post_type = 'post' AND post_status = 'publish' ORDER BY ID")
      .map(([id]) => Number(id));
    assert.deepEqual([...rows.keys()], publishedNow);
    for (const id of publishedNow) {
      const row = rows.get(id)!;
      assert.equal(row.guid, guids.get(id), `guid of ${id}`);
      const expected =
        id === legacy
          ? `old${legacy}`
          : id === foreign || id === original || id === copy
            ? undefined
            : `c${id}`;
      assert.equal(row.knownCode, expected, `knownCode of ${id}`);
    }
    const kept = new Map(
      wp
        .mysql("SELECT post_id, meta_value FROM wp_postmeta WHERE meta_key = '_lifeline_code'")
        .map(([id, c]) => [Number(id), c]),
    );
    assert.equal(kept.get(foreign), `c${foreign}`, 'the answered code is kept where the post claimed none');
    assert.equal(kept.get(legacy), undefined, 'an answer naming another code never overwrites a claim');

    // The listing: the same claims and GUIDs per row, and the installation id.
    const page = await listing('/wp-json/lifeline/v1/posts?per_page=500');
    assert.equal(page.status, 200, page.raw);
    assert.equal(page.body.installationId, installation);
    const listed = new Map(page.body.posts.map((p) => [p.postId, p]));
    const expectListed: [number, string | undefined][] = [
      [legacy, `old${legacy}`],
      [foreign, `c${foreign}`],
      [original, undefined],
      [copy, undefined],
      [publishedIds[0]!, `c${publishedIds[0]}`],
    ];
    for (const [id, code] of expectListed) {
      assert.equal(listed.get(id)?.knownCode, code, `listed knownCode of ${id}`);
      assert.equal(listed.get(id)?.guid, guids.get(id));
    }

    // Events: a new post names no code; the code in Lifeline's answer is kept, and its next event claims it.
    receiver.planEvent = (body) =>
      body.event === 'post.published'
        ? { status: 202, json: { workflowId: 'w', code: 'Fresh-42' } }
        : undefined;
    let created: { id: number; link: string };
    try {
      const res = await wp.rest<{ id: number; link: string }>('/wp/v2/posts', {
        method: 'POST',
        json: { title: 'Claims travel', status: 'publish' },
      });
      assert.equal(res.status, 201);
      created = res.body;
    } finally {
      receiver.planEvent = undefined;
    }
    const published = receiver.events.filter((e) => e.body.postId === created.id);
    assert.equal(published.length, 1);
    assert.equal(published[0]!.body.knownCode, undefined);
    assert.equal(
      published[0]!.body.guid,
      wp.mysql(`SELECT guid FROM wp_posts WHERE ID = ${created.id}`)[0]![0],
    );
    assert.equal(published[0]!.body.installationId, installation);
    await wp.rest(`/wp/v2/posts/${created.id}`, { method: 'POST', json: { slug: 'claims-travel-far' } });
    const updated = receiver.events.filter(
      (e) => e.body.postId === created.id && e.body.event === 'post.updated',
    );
    assert.equal(updated.length, 1);
    assert.equal(updated[0]!.body.knownCode, 'Fresh-42');

    // An importer (WP_IMPORTING) inserts the post before its meta: no event, so no claimless publish.
    const before = receiver.events.length;
    const imported = JSON.parse(
      (await php('import_post.php', ['Imported story', '_lifeline_code', 'imported1'])).trim(),
    ) as { id: number };
    assert.ok(imported.id > 0);
    assert.equal(receiver.events.length, before, 'no event while importing');
    assert.deepEqual(wp.mysql(`SELECT COUNT(*) FROM wp_lifeline_outbox WHERE post_id = ${imported.id}`), [
      ['0'],
    ]);

    // `wp lifeline reconcile` asks Lifeline to read the whole listing (site.permalinks_changed, reason requested).
    const asked = await wpOk(['lifeline', 'reconcile']);
    assert.match(asked.stdout, /Success: Lifeline is checking every post/);
    const request = receiver.events.at(-1)!;
    assert.deepEqual(
      [request.body.event, request.body.reason, request.body.installationId, request.body.site],
      ['site.permalinks_changed', 'requested', installation, SITE],
    );
    assert.deepEqual(receiver.unsigned, []);
    assert.equal(wp.serverLog().match(/PHP (Fatal|Warning|Notice|Deprecated)/), null, wp.serverLog());
  });
});
