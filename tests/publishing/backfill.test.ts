import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { type BitlyFake, startBitlyFake } from '../../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually, type Harness } from '../../devkit/harness/harness.ts';
import { recordHistory } from '../../devkit/harness/histories.ts';
import { uniqueId } from '../../devkit/harness/temporal.ts';
import { signWebhook } from '../../lib/auth/webhook_signature.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createMetrics } from '../../lib/shared/metrics.ts';
import { createUnavailableAdoptionGateway } from '../../lib/temporal/unavailable_adoption_gateway.ts';
import { createApp } from '../../routes/app.ts';
import { createWebDeps } from '../../server/web_deps.ts';

// The server side of the archive backfill (CONTRACT.md §1) against real Postgres, Redis, Temporal and the
// Bitly fake: answers per post, adoption, idempotence, the dry run, refusals, 503 without Temporal.

const SITE = 'archive';
const PREFIX = `${uniqueId('lifeline-test')}:`;
let fake: BitlyFake;
let h: Harness;
let redis: ReturnType<typeof createClient>;

before(async () => {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  h = await createHarness({
    env: {
      ...fake.env(),
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: PREFIX,
      SAFETY_TRUSTED_HOSTS: 'news.example',
    },
  });
  await h.startWorker({ vendors: { bitly: { timeoutMs: 2_000 }, retryBaseMs: 50, retryMaxMs: 500 } });
  redis = createClient({ url: 'redis://127.0.0.1:6379' });
  await redis.connect();
});
after(async () => {
  await redis?.close();
  await h?.close();
  await fake?.stop();
});

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

function batchBody(run: string, batch: number, posts: Post[], extra: Record<string, unknown> = {}) {
  return {
    id: `${run}:${batch}`,
    run,
    site: SITE,
    batch,
    dryRun: false,
    final: false,
    total: 1000,
    // Nothing listens there: the WordPress reconciliation a finished run asks for fails fast, offline.
    restUrl: 'http://127.0.0.1:9/wp-json/lifeline/v1/',
    posts,
    ...extra,
  };
}

async function sendBatch(body: unknown, app = h.app, secret = h.webhookSecret) {
  const raw = JSON.stringify(body);
  const res = await app.request('/api/v1/hooks/wordpress/backfill', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'X-Lifeline-Signature': await signWebhook(secret, raw, Date.now() / 1000),
    },
    body: raw,
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

type Results = { postId: number; outcome: string; code?: string; detail?: string }[];

async function servingRecord(code: string): Promise<string | null> {
  return redis.get(`${PREFIX}link:${code}`);
}

async function linkCount(): Promise<number> {
  const [row] = await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links`;
  return row!.n;
}

describe('POST /api/v1/hooks/wordpress/backfill', () => {
  test('mints, keeps and adopts per post; the run reaches the serving store and Bitly with the same codes; a resend and a second run change nothing', async () => {
    const run = randomUUID();
    // Already linked by a publish event before the backfill.
    const published = await h.webhook({
      id: `d-${randomUUID()}`,
      event: 'post.published',
      site: SITE,
      postId: 3,
      permalink: post(3).permalink,
      occurredAt: new Date().toISOString(),
    });
    assert.equal(published.status, 202);
    const existing = await eventually(async () => {
      const res = await h.api(`/api/v1/links/by-post/${SITE}/3`);
      const link = res.status === 200 ? ((await res.json()) as { code: string; status: string }) : undefined;
      return link?.status === 'active' ? link : undefined;
    });
    // On Bitly by hand before Lifeline: imported by reconciliation (unbound), pointing at post 5's permalink.
    fake.seed({ keyword: 'Legacy-Five', longUrl: post(5).permalink });
    await h.db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      VALUES ('Legacy-Five', ${post(5).permalink}, 'active', 'clean', 'import', 'import:bitly')`;
    // A custom back-half the post already had on our Bitly domain (post 6), one on bit.ly (post 7, not ours).
    fake.seed({ keyword: 'old-six', longUrl: 'https://news.example/?p=6' });

    const posts = [
      post(1),
      post(2, { title: 'Q&A: Tom & Jerry' }),
      post(3),
      post(5),
      post(6, { knownShortUrl: 'https://sho.rt/old-six' }),
      post(7, { knownShortUrl: 'https://bit.ly/3abcDEF' }),
      post(8, { publishedAt: '2099-01-01T00:00:00Z' }),
      post(9, { permalink: 'javascript:alert(1)' }),
      post(10, { knownShortUrl: 'https://sho.rt/api' }),
    ];
    const first = await sendBatch(batchBody(run, 1, posts, { final: true }));
    assert.equal(first.status, 202, JSON.stringify(first.json));
    assert.equal(first.json.workflowId, `backfill:${SITE}:${run}`);
    assert.equal(first.json.accepted, posts.length);
    const results = first.json.results as Results;
    const byPost = new Map(results.map((r) => [r.postId, r]));
    assert.deepEqual(
      results.map((r) => [r.postId, r.outcome]),
      [
        [1, 'minted'],
        [2, 'minted'],
        [3, 'kept'],
        [5, 'adopted'],
        [6, 'adopted'],
        [7, 'minted'],
        [8, 'not-published'],
        [9, 'rejected'],
        [10, 'minted'],
      ],
    );
    assert.equal(byPost.get(3)!.code, existing.code, 'a post that has a code keeps it');
    assert.equal(byPost.get(5)!.code, 'Legacy-Five', 'the imported Bitly link becomes the post link');
    assert.equal(byPost.get(6)!.code, 'old-six', 'the free back-half on our domain is adopted');
    assert.match(byPost.get(9)!.detail ?? '', /permalink must use http or https/);
    assert.notEqual(byPost.get(10)!.code, 'api', 'a reserved word is never adopted');

    // Everything is served and on Bitly under the same code, via the run's workflow and the sync workflows.
    const handle = h.temporal.client.workflow.getHandle(`backfill:${SITE}:${run}`);
    const report = (await handle.result()) as { outcomes: Record<string, number>; propagated: number };
    await recordHistory('backfillPostsWorkflow-run', `backfill:${SITE}:${run}`);
    assert.deepEqual(report.outcomes, { minted: 4, kept: 1, adopted: 2, 'not-published': 1, rejected: 1 });
    const fresh = [1, 2, 5, 6, 7, 10].map((id) => byPost.get(id)!.code!);
    for (const [id, code] of [1, 2, 5, 6, 7, 10].map((id, i) => [id, fresh[i]!] as const)) {
      const answer = await h.app.request(`/${code}`);
      assert.equal(answer.status, 301, `post ${id}`);
      assert.equal(answer.headers.get('Location'), post(id).permalink);
      assert.ok(await servingRecord(code), `serving store holds ${code}`);
      await eventually(
        async () => (fake.linkByKeyword(code)?.longUrl === post(id).permalink ? true : undefined),
        {
          what: `Bitly to hold ${code} → post ${id}`,
          timeoutMs: 30_000,
        },
      );
    }
    // The adopted bitlink was brought to the permalink, not duplicated.
    assert.equal(fake.listLinks().filter((l) => l.keywords.includes('old-six')).length, 1);
    const [pg] = await h.db.sql<{ site: string; postId: number; origin: string }[]>`
      SELECT site, post_id AS "postId", origin FROM links WHERE code = 'Legacy-Five'`;
    assert.deepEqual(pg, { site: SITE, postId: 5, origin: 'import' });
    const audit = await h.db.sql<
      { action: string }[]
    >`SELECT action FROM audit_log WHERE code = 'old-six' ORDER BY id`;
    assert.deepEqual(
      audit.map((a) => a.action),
      ['link.minted', 'link.adopted'],
    );

    // The same batch again (a plugin that crashed before saving its cursor): the same answers, nothing new.
    const links = await linkCount();
    const bitlyCalls = fake.requests.length;
    const again = await sendBatch(batchBody(run, 1, posts, { final: true }));
    assert.equal(again.status, 202);
    assert.deepEqual(again.json.results, first.json.results);
    // A second run over the same archive: every post keeps its code.
    const second = await sendBatch(batchBody(randomUUID(), 1, posts.slice(0, 7), { final: true }));
    assert.deepEqual(
      (second.json.results as Results).map((r) => r.outcome),
      ['kept', 'kept', 'kept', 'kept', 'kept', 'kept', 'not-published'],
    );
    assert.deepEqual(
      (second.json.results as Results).slice(0, 6).map((r) => r.code),
      [1, 2, 3, 5, 6, 7].map((id) => (id === 3 ? existing.code : byPost.get(id)!.code)),
    );
    assert.equal(await linkCount(), links, 'no link was added');
    await h.temporal.client.workflow.getHandle(String(second.json.workflowId)).result();
    assert.ok(fake.requests.length - bitlyCalls < 5, 'Bitly was hardly asked anything');
  });

  test('answers recorded as not yet propagated (written before the sync queue) are queued by the run before it closes', async () => {
    const run = randomUUID();
    const first = await sendBatch(batchBody(run, 1, [post(201), post(202)]));
    assert.equal(first.status, 202, JSON.stringify(first.json));
    const codes = (first.json.results as Results).map((r) => r.code!);
    // Drained once; then made to look like rows from before the queue: unmarked, and gone from the serving store.
    await eventually(async () => {
      const [row] = await h.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM link_sync_queue WHERE code = ANY(${h.db.sql.array(codes)}::text[])`;
      return row!.n === 0 ? true : undefined;
    });
    await h.db.sql`UPDATE backfill_posts SET propagated = false WHERE site = ${SITE} AND run_id = ${run}`;
    await redis.del(codes.map((c) => `${PREFIX}link:${c}`));

    const last = await sendBatch(batchBody(run, 2, [post(203)], { final: true }));
    assert.equal(last.status, 202, JSON.stringify(last.json));
    const report = (await h.temporal.client.workflow.getHandle(`backfill:${SITE}:${run}`).result()) as {
      received: number;
      propagated: number;
    };
    assert.deepEqual([report.received, report.propagated], [3, 3], 'the run closed only once all propagated');
    const [waiting] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM backfill_posts WHERE site = ${SITE} AND run_id = ${run} AND NOT propagated`;
    assert.equal(waiting!.n, 0);
    for (const code of codes)
      await eventually(async () => ((await servingRecord(code)) ? true : undefined), {
        what: `the serving store to hold ${code} again`,
      });
  });

  test('a dry run answers would-mint / would-keep / would-adopt and changes nothing', async () => {
    const run = randomUUID();
    fake.seed({ keyword: 'dry-adopt', longUrl: 'https://news.example/?p=21' });
    const before = await linkCount();
    const res = await sendBatch(
      batchBody(run, 1, [post(1), post(20), post(21, { knownShortUrl: 'https://sho.rt/dry-adopt' })], {
        dryRun: true,
        final: true,
      }),
    );
    assert.equal(res.status, 202);
    assert.deepEqual(
      (res.json.results as Results).map((r) => [r.postId, r.outcome]),
      [
        [1, 'would-keep'],
        [20, 'would-mint'],
        [21, 'would-adopt'],
      ],
    );
    assert.equal(await linkCount(), before);
    const [runs] = await h.db.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM backfill_runs WHERE run_id = ${run}`;
    assert.equal(runs!.n, 0, 'a dry run records nothing');
  });

  test('refusals: a bad signature is 401, a malformed batch 400 naming the field; without Temporal a batch is 503 + Retry-After and its resend is answered the same', async () => {
    const body = batchBody(randomUUID(), 1, [post(30)]);
    const forged = await sendBatch(body, h.app, 'not-the-secret-at-all');
    assert.equal(forged.status, 401);
    assert.match(String(forged.json.detail), /signature does not match/);

    const bad = await sendBatch({ ...body, posts: [post(31), post(30)], batch: 0 });
    assert.equal(bad.status, 400);
    const paths = (bad.json.errors as { path: string }[]).map((e) => e.path);
    assert.ok(paths.includes('batch'), JSON.stringify(bad.json));
    assert.ok(paths.includes('posts.1.postId'), JSON.stringify(bad.json));

    // A web tier that cannot reach Temporal: the batch is written, the answer is 503, the resend replays it.
    const deps = await createWebDeps(h.config, {
      sql: h.db.sql,
      logger: createLogger({ level: 'silent', name: 'no-temporal' }),
      metrics: createMetrics(),
      adoption: createUnavailableAdoptionGateway('test: Temporal is down'),
    });
    try {
      const down = createApp(deps);
      const refused = await sendBatch(body, down);
      assert.equal(refused.status, 503);
      assert.ok(Number(refused.headers.get('Retry-After')) > 0);
      const accepted = await sendBatch(body, h.app);
      assert.equal(accepted.status, 202);
      const [result] = accepted.json.results as Results;
      assert.equal(result!.outcome, 'minted');
      await eventually(async () =>
        (await h.app.request(`/${result!.code}`)).status === 301 ? true : undefined,
      );
    } finally {
      await deps.close();
    }
  });
});
