import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { waitForPostLink, wordpressEvent } from '../../devkit/harness/wordpress_events.ts';
import { signWebhook } from '../../lib/auth/webhook_signature.ts';
import { verifyPublicFront } from '../../lib/failover/verify_fronts.ts';
import type { ReconcileLinksInput, ReconcileReport } from '../../workflows/contract.ts';

// The Bitly budget of an archive backfill, against the Bitly fake: the dry run says how many Bitly creates a
// real run would make against the month's limit (read from Bitly's plan limits, else BITLY_MONTHLY_CREATE_LIMIT);
// with ARCHIVE_LINKS_IN_HOUSE a real run creates nothing on Bitly, and neither reconciliation nor a failback's
// public check counts those links as drift.

const SITE = 'archive';

interface Post {
  postId: number;
  permalink: string;
  title?: string;
  publishedAt: string;
  modifiedAt: string;
  knownShortUrl?: string;
}

function post(postId: number, extra: Partial<Post> = {}): Post {
  return {
    postId,
    permalink: `https://news.example/archive/story-${postId}/`,
    title: `Story ${postId}`,
    publishedAt: '2020-03-01T08:00:00Z',
    modifiedAt: '2021-05-02T10:11:12Z',
    ...extra,
  };
}

function batchBody(posts: Post[], extra: Record<string, unknown> = {}) {
  const run = randomUUID();
  return {
    id: `${run}:1`,
    run,
    site: SITE,
    batch: 1,
    dryRun: true,
    final: true,
    total: posts.length,
    // Nothing listens there: the WordPress reconciliation a finished run asks for fails fast, offline.
    restUrl: 'http://127.0.0.1:9/wp-json/lifeline/v1/',
    posts,
    ...extra,
  };
}

interface BatchAnswer {
  results: { postId: number; outcome: string; code?: string }[];
  bitly?: Record<string, unknown>;
}

async function sendBatch(h: Harness, body: unknown): Promise<BatchAnswer> {
  const raw = JSON.stringify(body);
  const res = await h.app.request('/api/v1/hooks/wordpress/backfill', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'X-Lifeline-Signature': await signWebhook(h.webhookSecret, raw, Date.now() / 1000),
    },
    body: raw,
  });
  const json = (await res.json()) as BatchAnswer;
  assert.equal(res.status, 202, JSON.stringify(json));
  return json;
}

/** Bitly calls that make a bitlink or a back-half. */
function creates(fake: BitlyFake): number {
  return (
    fake.requestsTo('POST', '/bitlinks').length +
    fake.requestsTo('POST', '/shorten').length +
    fake.requestsTo('POST', '/custom_bitlinks').length
  );
}

describe('the dry run counts Bitly creates against the monthly limit', () => {
  let fake: BitlyFake;
  let h: Harness;
  before(async () => {
    fake = await startBitlyFake({ domains: ['sho.rt'] });
    h = await createHarness({
      env: { ...fake.env(), SAFETY_TRUSTED_HOSTS: 'news.example', BITLY_MONTHLY_CREATE_LIMIT: '40' },
    });
  });
  after(async () => {
    await h?.close();
    await fake?.stop();
  });

  // Five posts to mint, one adopting a back-half Bitly already holds (no create), one adopting a back-half of
  // our own short host (a create: Bitly does not hold it yet).
  const posts = () => [
    post(1),
    post(2),
    post(3),
    post(4),
    post(5),
    post(6, { knownShortUrl: 'https://sho.rt/old-six' }),
    post(7, { knownShortUrl: 'http://sho.rt.test/Old7' }),
  ];

  test("from Bitly's plan limits: the tightest of the month's link limits, with what is used", async () => {
    fake.seed({ keyword: 'old-six', longUrl: 'https://news.example/?p=6' });
    fake.seed({ keyword: 'by-hand', longUrl: 'https://news.example/by-hand' });
    fake.seed({ keyword: 'by-hand-2', longUrl: 'https://news.example/by-hand-2' });
    fake.planLimits = [
      { name: 'encodes', description: 'Links', limit: 1500 },
      { name: 'bsd_encodes', description: 'Branded links', limit: 100 },
      { name: 'keyword_overrides', description: 'Custom back-halves', limit: 500 },
      { name: 'qr_codes', description: 'QR Codes', limit: 2, count: 2 },
    ];
    const answer = await sendBatch(h, batchBody(posts()));
    assert.deepEqual(
      answer.results.map((r) => r.outcome),
      ['would-mint', 'would-mint', 'would-mint', 'would-mint', 'would-mint', 'would-adopt', 'would-adopt'],
    );
    assert.deepEqual(answer.bitly, {
      creates: 6,
      archiveLinksInHouse: false,
      monthlyLimit: 100,
      usedThisMonth: 3,
      remaining: 97,
      limitSource: 'bitly',
    });
    assert.equal(creates(fake), 0, 'a dry run creates nothing');
    assert.equal(fake.requestsTo('GET', '/organizations/Ofake0org/plan_limits').length, 1);
  });

  test('from BITLY_MONTHLY_CREATE_LIMIT when Bitly does not say (a token that may not read its plan)', async () => {
    fake.planLimits = null;
    const answer = await sendBatch(h, batchBody(posts()));
    assert.deepEqual(answer.bitly, {
      creates: 6,
      archiveLinksInHouse: false,
      monthlyLimit: 40,
      usedThisMonth: null,
      remaining: null,
      limitSource: 'setting',
    });
  });
});

describe('ARCHIVE_LINKS_IN_HOUSE: archive links are never created on Bitly', () => {
  let fake: BitlyFake;
  let h: Harness;
  before(async () => {
    fake = await startBitlyFake({ domains: ['sho.rt'] });
    h = await createHarness({
      env: { ...fake.env(), SAFETY_TRUSTED_HOSTS: 'news.example', ARCHIVE_LINKS_IN_HOUSE: 'true' },
    });
    await h.startWorker({
      vendors: { bitly: { timeoutMs: 2_000 }, retryBaseMs: 50, retryMaxMs: 500, publishWaitMs: 60_000 },
    });
  });
  after(async () => {
    await h?.close();
    await fake?.stop();
  });

  async function reconcile(input: ReconcileLinksInput): Promise<ReconcileReport> {
    return (await h.temporal.client.workflow.execute('reconcileLinksWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: uniqueId('reconcile:test'),
      args: [input],
    })) as ReconcileReport;
  }

  test('dry run: 0 creates; real run: 0 Bitly creates, served in-house; reconciliation and the public check see no drift', async () => {
    fake.planLimits = [{ name: 'bsd_encodes', description: 'Branded links', limit: 50 }];
    const posts = [post(11), post(12), post(13), post(14, { knownShortUrl: 'http://sho.rt.test/Old14' })];
    const dry = await sendBatch(h, batchBody(posts));
    assert.equal(dry.bitly?.creates, 0);
    assert.equal(dry.bitly?.archiveLinksInHouse, true);
    assert.equal(dry.bitly?.limitSource, 'bitly');

    const real = await sendBatch(h, batchBody(posts, { dryRun: false }));
    const codes = real.results.map((r) => r.code!);
    assert.deepEqual(
      real.results.map((r) => r.outcome),
      ['minted', 'minted', 'minted', 'adopted'],
    );
    // The sync queue took them to the serving store (and decided Bitly needs nothing).
    await eventually(
      async () => {
        const [row] = await h.db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM link_sync_queue WHERE code = ANY(${codes})`;
        return row!.n === 0 ? true : undefined;
      },
      { timeoutMs: 30_000, what: 'the sync queue to drain' },
    );
    for (const code of codes) assert.equal((await h.app.request(`/${code}`)).status, 301);
    assert.equal(creates(fake), 0, 'no Bitly create for archive links');
    const states = await h.db.sql<{ state: string }[]>`
      SELECT state FROM vendor_links WHERE vendor = 'bitly' AND code = ANY(${codes})`;
    assert.deepEqual(
      states.map((s) => s.state),
      ['inhouse', 'inhouse', 'inhouse', 'inhouse'],
    );

    // A post published now still gets its Bitly copy: only the archive stays in-house.
    const res = await h.webhook(wordpressEvent('post.published', { site: SITE, postId: 500 }));
    assert.equal(res.status, 202);
    const fresh = await waitForPostLink(h, SITE, 500, (l) => l.status === 'active');
    assert.ok(fake.linkByKeyword(fresh.code), 'a new post is on Bitly');
    assert.equal(creates(fake), 1);

    // Reconciliation: the archive links are not missing on Bitly, they are in-house only (counted apart).
    const check = await reconcile({ reason: 'test check', repair: false });
    assert.deepEqual(check.bitly?.drift, {}, JSON.stringify(check.bitly));
    assert.equal(check.bitly?.inhouseOnly, 4);
    const repair = await reconcile({ reason: 'test repair', repair: true });
    assert.deepEqual(repair.bitly?.drift, {});
    assert.equal(creates(fake), 1, 'a repairing reconciliation creates nothing for them either');

    // A failback's public check (readers reach Bitly) samples only links Bitly holds.
    const checked = await verifyPublicFront(
      {
        sql: h.db.sql,
        logger: h.logger,
        resolver: h.deps.resolver,
        front: {
          shortBaseUrl: fake.url,
          redirect: h.config.redirect,
          dnsAdapter: undefined,
          dnsTtlSeconds: 60,
        },
      },
      { to: 'bitly', sample: 20 },
    );
    assert.deepEqual(checked, { checked: 1 });
  });
});
