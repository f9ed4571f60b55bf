// Archive backfill at scale through the signed bulk endpoint, against real Postgres, Redis, a real
// Temporal dev server, the real worker entry (a child process, SIGKILLed mid-run) and the Bitly fake:
//
//   npx tsx bench/backfill.ts [posts=5000] [batchSize=500]
//
// The sender plays the WordPress plugin: signed batches in post-ID order, each sent after the previous one was
// acknowledged. Mid-run it "crashes" (one batch is sent but its answer thrown away, as a killed WP-CLI would)
// and the worker process is SIGKILLed; both start again and resume (the batch is resent). Then it checks that
// every post has exactly one code, identical in Postgres, the serving store and the Bitly fake, and that a
// second run over the same archive changes nothing. It prints posts/s for: batches acknowledged (links minted,
// durable, answered, queued for the sync queue), serving store complete, the run closed, Bitly complete.
// Baseline in the same run: one INSERT … SELECT of the same number of links (the floor of writing them), in
// Postgres alone.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createClient } from '@redis/client';
import { startBitlyFake } from '../devkit/fakes/bitly_fake.ts';
import { createHarness, eventually } from '../devkit/harness/harness.ts';
import { uniqueId } from '../devkit/harness/temporal.ts';
import { startWorkerProcess } from '../devkit/harness/worker_process.ts';
import { signWebhook } from '../lib/auth/webhook_signature.ts';
import { decodeServingRecord } from '../lib/redirect/serving_store.ts';

const posts = Number(process.argv[2] ?? 5_000);
const batchSize = Number(process.argv[3] ?? 500);
const SITE = 'bench';
const PREFIX = `${uniqueId('lifeline-bench')}:`;
/** Every 200th post already had a back-half on our Bitly domain (a WP Bitly plugin's custom link). */
const ADOPT_EVERY = 200;

const fake = await startBitlyFake({ domains: ['sho.rt'] });
const env = {
  ...fake.env(),
  REDIS_URL: 'redis://127.0.0.1:6379',
  REDIS_KEY_PREFIX: PREFIX,
  SAFETY_TRUSTED_HOSTS: 'news.example',
  LOG_LEVEL: 'silent',
};
const h = await createHarness({ env });
const redis = createClient({ url: 'redis://127.0.0.1:6379' });
await redis.connect();
const permalink = (id: number) => `https://news.example/archive/${id}/story-${id}/`;
const rate = (n: number, ms: number) => Math.round((n * 1000) / ms);

// The worker logs at info: its "worker running" line says it is ready.
const workerEnv = { ...env, LOG_LEVEL: 'info' };
let child = startWorkerProcess({ h, env: workerEnv });
async function workerReady() {
  await eventually(async () => (child.ready ? true : undefined), {
    timeoutMs: 120_000,
    what: 'the worker process',
  });
}

/** When the serving store holds a record for every post's link (polled). */
async function servingComplete(): Promise<number> {
  return eventually(
    async () => {
      const codes = (await h.db.sql<{ code: string }[]>`SELECT code FROM links WHERE site = ${SITE}`).map(
        (r) => r.code,
      );
      if (codes.length < posts) return undefined;
      for (let i = 0; i < codes.length; i += 5000) {
        const values = await redis.mGet(codes.slice(i, i + 5000).map((c) => `${PREFIX}link:${c}`));
        if (values.some((v) => v === null)) return undefined;
      }
      return performance.now();
    },
    { timeoutMs: 3_600_000, intervalMs: 250, what: 'the serving store to hold every link' },
  );
}

try {
  // Baseline: the same number of links written by one statement, nothing else.
  const b0 = performance.now();
  // A table like links, with every index and constraint, so the comparison is fair.
  await h.db.sql`CREATE TABLE bench_baseline_links (LIKE links INCLUDING ALL)`;
  await h.db.sql`
    INSERT INTO bench_baseline_links (code, target_url, status, safety, origin, owner, site, post_id)
    SELECT 'b' || i, 'https://news.example/archive/' || i || '/', 'active', 'clean', 'wordpress', 'bench', 'b', i
    FROM generate_series(1, ${posts}) AS i`;
  const baselineMs = performance.now() - b0;

  for (let id = ADOPT_EVERY; id <= posts; id += ADOPT_EVERY) {
    fake.seed({ keyword: `legacy-${id}`, longUrl: `https://old-cms.example/${id}` });
  }
  const all = Array.from({ length: posts }, (_, i) => i + 1).map((postId) => ({
    postId,
    permalink: permalink(postId),
    title: `Archive story ${postId}`,
    publishedAt: '2019-03-01T08:00:00Z',
    modifiedAt: '2021-05-02T10:11:12Z',
    ...(postId % ADOPT_EVERY === 0 ? { knownShortUrl: `https://sho.rt/legacy-${postId}` } : {}),
  }));
  const batches = Math.ceil(posts / batchSize);

  async function send(run: string, batch: number) {
    const slice = all.slice((batch - 1) * batchSize, batch * batchSize);
    const body = JSON.stringify({
      id: `${run}:${batch}`,
      run,
      site: SITE,
      batch,
      dryRun: false,
      final: batch === batches,
      total: posts,
      restUrl: 'http://127.0.0.1:9/wp-json/lifeline/v1/',
      posts: slice,
    });
    for (;;) {
      const res = await h.app.request('/api/v1/hooks/wordpress/backfill', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Lifeline-Signature': await signWebhook(h.webhookSecret, body, Date.now() / 1000),
        },
        body,
      });
      const json = (await res.json()) as { results?: { outcome: string }[] };
      if (res.status === 202) return json.results!;
      if (res.status !== 503) throw new Error(`batch ${batch}: ${res.status} ${JSON.stringify(json)}`);
      await new Promise((r) => setTimeout(r, Number(res.headers.get('Retry-After') ?? 1) * 1000));
    }
  }

  await workerReady();
  const run = randomUUID();
  const outcomes: Record<string, number> = {};
  const count = (results: { outcome: string }[]) => {
    for (const r of results) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
  };
  const crashAt = Math.max(1, Math.floor(batches / 2));
  const t0 = performance.now();
  for (let batch = 1; batch <= batches; batch++) {
    if (batch === crashAt) {
      // The sender dies after Lifeline wrote this batch but before it saved the answer; the worker is killed.
      await send(run, batch);
      child.process.kill('SIGKILL');
      await new Promise((r) => child.process.once('exit', r));
      // Its successor starts while the sender goes on (acknowledging needs Postgres and Temporal, not the worker).
      child = startWorkerProcess({ h, env: workerEnv });
    }
    count(await send(run, batch));
  }
  const acknowledgedMs = performance.now() - t0;

  const servedAt = await servingComplete();
  const servingMs = servedAt - t0;
  const workflowId = `backfill:${SITE}:${run}`;
  await h.temporal.client.workflow.getHandle(workflowId).result();
  const propagatedMs = performance.now() - t0;

  const rows = await h.db.sql<{ postId: number; code: string; url: string; status: string }[]>`
    SELECT post_id AS "postId", code, target_url AS url, status FROM links WHERE site = ${SITE} ORDER BY post_id`;
  const byPost = new Map(rows.map((r) => [r.postId, r]));
  const problems: string[] = [];
  if (rows.length !== posts) problems.push(`${rows.length} links for ${posts} posts`);
  for (const post of all) {
    const row = byPost.get(post.postId);
    if (!row) problems.push(`post ${post.postId} has no link`);
    else if (row.url !== post.permalink || row.status !== 'active')
      problems.push(`post ${post.postId}: ${row.status} ${row.url}`);
    if (problems.length > 10) break;
  }
  const codes = rows.map((r) => r.code);
  for (let i = 0; i < codes.length; i += 1000) {
    const chunk = codes.slice(i, i + 1000);
    const values = await redis.mGet(chunk.map((c) => `${PREFIX}link:${c}`));
    values.forEach((raw, j) => {
      const record = decodeServingRecord(chunk[j]!, raw);
      if (record?.url !== byPost.get(rows[i + j]!.postId)!.url)
        problems.push(`serving store: ${chunk[j]} ${record?.url}`);
    });
  }
  await eventually(
    async () => {
      const missing = rows.filter((r) => fake.linkByKeyword(r.code)?.longUrl !== r.url);
      return missing.length === 0 ? true : undefined;
    },
    { timeoutMs: 3_600_000, intervalMs: 1_000, what: 'Bitly to hold every code' },
  );
  const bitlyMs = performance.now() - t0;
  const live = fake
    .listLinks()
    .filter((l) => !l.archived && l.longUrl.startsWith('https://news.example/archive/'));
  const perTarget = new Map<string, number>();
  for (const l of live) perTarget.set(l.longUrl, (perTarget.get(l.longUrl) ?? 0) + 1);
  const duplicates = [...perTarget.values()].filter((n) => n > 1).length;
  if (duplicates > 0) problems.push(`${duplicates} permalinks have more than one live bitlink`);
  const adopted = rows.filter((r) => r.code.startsWith('legacy-')).length;

  // A second run over the same archive changes nothing.
  const linksBefore = rows.length;
  const requestsBefore = fake.requests.length;
  const second = randomUUID();
  const secondOutcomes: Record<string, number> = {};
  for (let batch = 1; batch <= batches; batch++) {
    for (const r of await send(second, batch))
      secondOutcomes[r.outcome] = (secondOutcomes[r.outcome] ?? 0) + 1;
  }
  await h.temporal.client.workflow.getHandle(`backfill:${SITE}:${second}`).result();
  const [after] = await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links WHERE site = ${SITE}`;
  if (after!.n !== linksBefore) problems.push(`the second run changed the link count to ${after!.n}`);

  console.log(
    JSON.stringify(
      {
        posts,
        batchSize,
        batches,
        crash: { senderAnswerLostAtBatch: crashAt, workerSigkilledAtBatch: crashAt },
        outcomes,
        adopted,
        acknowledged: { ms: Math.round(acknowledgedMs), postsPerSecond: rate(posts, acknowledgedMs) },
        servingStore: { ms: Math.round(servingMs), postsPerSecond: rate(posts, servingMs) },
        // The run's workflow closed (its links queued for the sync-queue drainer; ADR 0024).
        runClosed: { ms: Math.round(propagatedMs), postsPerSecond: rate(posts, propagatedMs) },
        bitly: {
          ms: Math.round(bitlyMs),
          postsPerSecond: rate(posts, bitlyMs),
          requests: fake.requests.length,
        },
        baselineInsert: { ms: Math.round(baselineMs), postsPerSecond: rate(posts, baselineMs) },
        acknowledgedToBaseline: Number((rate(posts, acknowledgedMs) / rate(posts, baselineMs)).toFixed(3)),
        secondRun: { outcomes: secondOutcomes, bitlyRequests: fake.requests.length - requestsBefore },
        problems,
        ok: problems.length === 0,
      },
      null,
      2,
    ),
  );
  if (problems.length > 0) process.exitCode = 1;
} finally {
  child.process.kill('SIGKILL');
  await redis.close();
  await h.close();
  await fake.stop();
}
