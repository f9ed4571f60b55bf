// Archive backfill at scale through the signed bulk endpoint, against real Postgres, Redis, a real Temporal dev
// server, the real web entry (main.ts) and worker entry (workers/main.ts) as child processes (the worker
// SIGKILLed mid-run), and Bitly off or the Bitly fake:
//
//   npx tsx bench/backfill.ts [posts=5000] [batchSize=500] [--bitly=fast|paced|off] [--segment=N] [--cpu-prof=DIR]
//                             [--wait-adopted]
//
// --bitly=fast (default): the fake answers as fast as it can; the run waits until Bitly holds every code.
// --bitly=paced: the fake keeps Bitly's documented limits (100 requests a minute, 5 connections); Bitly trails
//   by days at that pace, so the run reports how far it got and checks what it holds instead of waiting. It
//   reports how many adopted back-halves (on Bitly before the run, with the old CMS's address) Bitly already
//   answers with their permalink, against how many archive codes it created meanwhile: the drainer takes the
//   changes first (ADR 0104).
// --wait-adopted (paced): then waits until every adopted back-half is re-pointed, and reports when.
// --bitly=off: no Bitly configured (links live in Postgres and the serving store only).
// --segment: posts per segment of the posts/s and RSS series (default: a tenth of the run, at most 100,000).
// --cpu-prof: the web and the second worker write V8 CPU profiles into DIR when they stop.
//
// The sender plays the WordPress plugin: signed batches in post-ID order, each sent after the previous one was
// acknowledged. Mid-run it "crashes" (one batch is sent but its answer thrown away, as a killed WP-CLI would)
// and the worker process is SIGKILLed; both start again and resume (the batch is resent). Then it checks that
// every post has exactly one code, identical in Postgres, the serving store and Bitly, and that a second run
// over the same archive answers `kept` for every post and changes nothing (timed too). It prints posts/s per
// segment, the web's and the worker's RSS at each segment's end, and for the whole run: batches acknowledged
// (links minted, durable, answered, queued for the sync queue), serving store complete, the run closed, Bitly.
// Baseline in the same run: one INSERT … SELECT of the same number of links (the floor of writing them), in
// Postgres alone.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createClient } from '@redis/client';
import { type BitlyFake, startBitlyFake } from '../devkit/fakes/bitly_fake.ts';
import { harnessEntryEnv, startEntry } from '../devkit/harness/entry_process.ts';
import { createHarness, eventually, TEST_OUTGOING_ALLOWANCE } from '../devkit/harness/harness.ts';
import { uniqueId } from '../devkit/harness/temporal.ts';
import { startWorkerProcess } from '../devkit/harness/worker_process.ts';
import { signWebhook } from '../lib/auth/webhook_signature.ts';
import { decodeServingRecord } from '../lib/redirect/serving_store.ts';
import { getFreePort } from '../scripts/dev_server.ts';
import { ROOT } from '../scripts/temporal_cli.ts';
import { webNodeFlags } from '../scripts/web_node_flags.ts';
import { rssOf } from './process_stats.ts';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flag = (name: string) =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3);
const posts = Number(positional[0] ?? 5_000);
const batchSize = Number(positional[1] ?? 500);
const bitlyMode = (flag('bitly') ?? 'fast') as 'fast' | 'paced' | 'off';
if (!['fast', 'paced', 'off'].includes(bitlyMode)) throw new Error('--bitly must be fast, paced or off');
const segment = Number(flag('segment') ?? Math.min(100_000, Math.max(batchSize, Math.ceil(posts / 10))));
const cpuProfDir = flag('cpu-prof');
const waitAdopted = process.argv.includes('--wait-adopted');
if (waitAdopted && bitlyMode !== 'paced') throw new Error('--wait-adopted needs --bitly=paced');
const SITE = 'bench';
const PREFIX = `${uniqueId('lifeline-bench')}:`;
/** Every 200th post already had a back-half on our Bitly (or, Bitly off, short) domain. */
const ADOPT_EVERY = 200;
/** Bitly's documented limits (the /v4/shorten example: 100 a minute; 5 connections per IP). */
const PACED = { perMinute: 100, connections: 5 };

let fake: BitlyFake | undefined;
if (bitlyMode !== 'off') {
  fake = await startBitlyFake({ domains: ['sho.rt'] });
  if (bitlyMode === 'paced') {
    fake.perMinuteLimit = PACED.perMinute;
    fake.maxConcurrent = PACED.connections;
  }
}
const env: Record<string, string> = {
  ...(fake?.env() ?? {}),
  REDIS_URL: 'redis://127.0.0.1:6379',
  REDIS_KEY_PREFIX: PREFIX,
  SAFETY_TRUSTED_HOSTS: 'news.example',
  LOG_LEVEL: 'silent',
};
const h = await createHarness({ env });
const redis = createClient({ url: 'redis://127.0.0.1:6379' });
await redis.connect();
const permalink = (id: number) => `https://news.example/archive/${id}/story-${id}/`;
const adoptHost = fake ? 'sho.rt' : new URL(h.config.shortBaseUrl).host;
const rate = (n: number, ms: number) => Math.round((n * 1000) / ms);
const mb = (bytes: number) => Math.round(bytes / 1048576);
/** NODE_OPTIONS writing a CPU profile into DIR/name when the process exits (--cpu-prof). */
const profEnv = (name: string): Record<string, string> =>
  cpuProfDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${cpuProfDir}/${name}` } : {};

// The worker logs at info: its "worker running" line says it is ready.
const workerEnv = { ...env, LOG_LEVEL: 'info' };
let child = startWorkerProcess({ h, env: workerEnv });
async function workerReady() {
  await eventually(async () => (child.ready ? true : undefined), {
    timeoutMs: 120_000,
    what: 'the worker process',
  });
}
const webPort = await getFreePort();
const webUrl = `http://127.0.0.1:${webPort}`;
// The web entry with the web tier's Node flags (package.json's "web" script), as production runs it.
const web = startEntry('main.ts', {
  nodeFlags: webNodeFlags(ROOT),
  inheritEnv: true,
  env: {
    ...harnessEntryEnv(h),
    ...env,
    ...profEnv('web'),
    LOG_LEVEL: 'info',
    PORT: String(webPort),
    HOST: '127.0.0.1',
    WEB_CONCURRENCY: '1',
    SHUTDOWN_DELAY_MS: '0',
    OUTGOING_ALLOWED_PRIVATE: TEST_OUTGOING_ALLOWANCE,
  },
  keepChars: 20_000,
});

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
    { timeoutMs: 3_600_000, intervalMs: 1_000, what: 'the serving store to hold every link' },
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
  await h.db.sql`DROP TABLE bench_baseline_links`;

  if (fake) {
    for (let id = ADOPT_EVERY; id <= posts; id += ADOPT_EVERY) {
      fake.seed({ keyword: `legacy-${id}`, longUrl: `https://old-cms.example/${id}` });
    }
  }
  /** The posts of batch `batch` (1-based), built when sent: a million posts are not held at once. */
  const postsOf = (batch: number) => {
    const from = (batch - 1) * batchSize + 1;
    const to = Math.min(posts, batch * batchSize);
    const out = [];
    for (let postId = from; postId <= to; postId++)
      out.push({
        postId,
        permalink: permalink(postId),
        title: `Archive story ${postId}`,
        publishedAt: '2019-03-01T08:00:00Z',
        modifiedAt: '2021-05-02T10:11:12Z',
        ...(postId % ADOPT_EVERY === 0 ? { knownShortUrl: `https://${adoptHost}/legacy-${postId}` } : {}),
      });
    return out;
  };
  const batches = Math.ceil(posts / batchSize);

  async function send(run: string, batch: number) {
    const body = JSON.stringify({
      id: `${run}:${batch}`,
      run,
      site: SITE,
      batch,
      dryRun: false,
      final: batch === batches,
      total: posts,
      restUrl: 'http://127.0.0.1:9/wp-json/lifeline/v1/',
      posts: postsOf(batch),
    });
    for (;;) {
      const res = await fetch(`${webUrl}/api/v1/hooks/wordpress/backfill`, {
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

  await web.waitForOutput('web listening', { timeoutMs: 120_000, what: 'the web process to listen' });
  await workerReady();
  const run = randomUUID();
  const outcomes: Record<string, number> = {};
  const count = (results: { outcome: string }[]) => {
    for (const r of results) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
  };
  const crashAt = Math.max(1, Math.floor(batches / 2));
  const segments: {
    upTo: number;
    postsPerSecond: number;
    webRssMb: number;
    workerRssMb: number;
  }[] = [];
  const t0 = performance.now();
  let segmentStart = t0;
  let segmentFrom = 0;
  for (let batch = 1; batch <= batches; batch++) {
    if (batch === crashAt) {
      // The sender dies after Lifeline wrote this batch but before it saved the answer; the worker is killed.
      await send(run, batch);
      child.process.kill('SIGKILL');
      await new Promise((r) => child.process.once('exit', r));
      // Its successor starts while the sender goes on (acknowledging needs Postgres and Temporal, not the worker).
      child = startWorkerProcess({ h, env: { ...workerEnv, ...profEnv('worker') } });
    }
    count(await send(run, batch));
    const done = Math.min(posts, batch * batchSize);
    if (done - segmentFrom >= segment || done === posts) {
      const now = performance.now();
      segments.push({
        upTo: done,
        postsPerSecond: rate(done - segmentFrom, now - segmentStart),
        webRssMb: mb(rssOf(web.child.pid)),
        workerRssMb: mb(rssOf(child.process.pid)),
      });
      console.error(`backfill: ${JSON.stringify(segments.at(-1))}`);
      segmentStart = now;
      segmentFrom = done;
    }
  }
  const acknowledgedMs = performance.now() - t0;

  const servedAt = await servingComplete();
  const servingMs = servedAt - t0;
  const workflowId = `backfill:${SITE}:${run}`;
  await h.temporal.client.workflow.getHandle(workflowId).result();
  const propagatedMs = performance.now() - t0;

  const rows = await h.db.sql<{ postId: number; code: string; url: string; status: string }[]>`
    SELECT post_id::int AS "postId", code, target_url AS url, status FROM links WHERE site = ${SITE}
    ORDER BY post_id`;
  const problems: string[] = [];
  if (rows.length !== posts) problems.push(`${rows.length} links for ${posts} posts`);
  rows.forEach((row, i) => {
    if (problems.length > 10) return;
    if (row.postId !== i + 1) problems.push(`post ${i + 1} has no link (found post ${row.postId})`);
    else if (row.url !== permalink(row.postId) || row.status !== 'active')
      problems.push(`post ${row.postId}: ${row.status} ${row.url}`);
  });
  for (let i = 0; i < rows.length; i += 5000) {
    const chunk = rows.slice(i, i + 5000);
    const values = await redis.mGet(chunk.map((r) => `${PREFIX}link:${r.code}`));
    values.forEach((raw, j) => {
      const record = decodeServingRecord(chunk[j]!.code, raw);
      if (record?.url !== chunk[j]!.url && problems.length <= 10)
        problems.push(`serving store: ${chunk[j]!.code} ${record?.url}`);
    });
  }
  let bitly: Record<string, unknown> = { mode: 'off' };
  if (fake) {
    const f = fake;
    const onBitly = () => rows.filter((r) => f.linkByKeyword(r.code)?.longUrl === r.url).length;
    if (bitlyMode === 'fast') {
      await eventually(async () => (onBitly() === rows.length ? true : undefined), {
        timeoutMs: 3_600_000,
        intervalMs: 1_000,
        what: 'Bitly to hold every code',
      });
    }
    const bitlyMs = performance.now() - t0;
    const held = onBitly();
    // Paced, Bitly trails by days: what it holds must be right, and the rest must still be queued. An adopted
    // back-half is on Bitly before the run, with the old address it had; it is right once the queue reaches it.
    const elsewhere = rows
      .filter((r) => {
        const link = f.linkByKeyword(r.code);
        return link !== null && link.longUrl !== r.url;
      })
      .map((r) => r.code);
    const [awaiting] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM link_sync_queue WHERE code = ANY(${elsewhere})`;
    const wrong = elsewhere.length - awaiting!.n;
    if (wrong > 0) problems.push(`${wrong} codes on Bitly point elsewhere and are not queued for it`);
    const [queued] = await h.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM link_sync_queue q JOIN links l ON l.code = q.code WHERE l.site = ${SITE}`;
    if (held + queued!.n < rows.length)
      problems.push(`${rows.length - held - queued!.n} codes neither on Bitly nor queued for it`);
    const live = f
      .listLinks()
      .filter((l) => !l.archived && l.longUrl.startsWith('https://news.example/archive/'));
    const perTarget = new Map<string, number>();
    for (const l of live) perTarget.set(l.longUrl, (perTarget.get(l.longUrl) ?? 0) + 1);
    const duplicates = [...perTarget.values()].filter((n) => n > 1).length;
    if (duplicates > 0) problems.push(`${duplicates} permalinks have more than one live bitlink`);
    // Readers already follow the adopted back-halves: they are re-pointed before archive codes are created.
    const adoptedRows = rows.filter((r) => r.code.startsWith('legacy-'));
    const repointed = () => adoptedRows.filter((r) => f.linkByKeyword(r.code)?.longUrl === r.url).length;
    const adoptedAtEnd = repointed();
    const archiveCreatedAtEnd = held - adoptedAtEnd;
    let allRepointed: Record<string, number> | undefined;
    if (waitAdopted) {
      await eventually(async () => (repointed() === adoptedRows.length ? true : undefined), {
        timeoutMs: 6 * 3_600_000,
        intervalMs: 1_000,
        what: 'every adopted back-half re-pointed on Bitly',
      });
      allRepointed = {
        msFromStart: Math.round(performance.now() - t0),
        msAfterAcknowledged: Math.round(performance.now() - t0 - acknowledgedMs),
        archiveCreatedBy: onBitly() - adoptedRows.length,
      };
    }
    bitly = {
      mode: bitlyMode,
      ms: Math.round(bitlyMs),
      codes: held,
      stillQueued: queued!.n,
      // Adopted back-halves Bitly still answers with their old address, queued to be pointed at the permalink.
      heldWithOldAddress: awaiting!.n,
      adoptedRepointed: adoptedAtEnd,
      archiveCreated: archiveCreatedAtEnd,
      ...(allRepointed ? { allAdoptedRepointed: allRepointed } : {}),
      codesPerSecond: rate(held, bitlyMs),
      requests: f.requests.length,
      rateLimited: f.stats.rateLimited,
    };
  }
  const adopted = rows.filter((r) => r.code.startsWith('legacy-')).length;
  if (adopted !== Math.floor(posts / ADOPT_EVERY))
    problems.push(`${adopted} adopted back-halves for ${Math.floor(posts / ADOPT_EVERY)} posts that had one`);

  // A second run over the same archive changes nothing: every post `kept`, no link added, no Bitly request.
  const linksBefore = rows.length;
  const requestsBefore = fake?.requests.filter((r) => r.method !== 'GET').length ?? 0;
  const second = randomUUID();
  const secondOutcomes: Record<string, number> = {};
  const s0 = performance.now();
  for (let batch = 1; batch <= batches; batch++) {
    for (const r of await send(second, batch))
      secondOutcomes[r.outcome] = (secondOutcomes[r.outcome] ?? 0) + 1;
  }
  const secondMs = performance.now() - s0;
  await h.temporal.client.workflow.getHandle(`backfill:${SITE}:${second}`).result();
  const [after] = await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links WHERE site = ${SITE}`;
  if (after!.n !== linksBefore) problems.push(`the second run changed the link count to ${after!.n}`);
  if (secondOutcomes.kept !== posts) problems.push(`second run: ${JSON.stringify(secondOutcomes)}`);
  // Paced, the drainer still works through the first run's queue: only the fast fake can be held to zero.
  const secondBitlyWrites = (fake?.requests.filter((r) => r.method !== 'GET').length ?? 0) - requestsBefore;
  if (bitlyMode === 'fast' && secondBitlyWrites > 0)
    problems.push(`the second run made ${secondBitlyWrites} Bitly writes`);

  const first = segments[0]!.postsPerSecond;
  console.log(
    JSON.stringify(
      {
        posts,
        batchSize,
        batches,
        bitlyMode,
        crash: { senderAnswerLostAtBatch: crashAt, workerSigkilledAtBatch: crashAt },
        outcomes,
        adopted,
        segments: segments.map((s) => ({ ...s, ofFirst: Number((s.postsPerSecond / first).toFixed(2)) })),
        acknowledged: { ms: Math.round(acknowledgedMs), postsPerSecond: rate(posts, acknowledgedMs) },
        servingStore: { ms: Math.round(servingMs), postsPerSecond: rate(posts, servingMs) },
        // The run's workflow closed (its links queued for the sync-queue drainer; ADR 0024).
        runClosed: { ms: Math.round(propagatedMs), postsPerSecond: rate(posts, propagatedMs) },
        bitly,
        baselineInsert: { ms: Math.round(baselineMs), postsPerSecond: rate(posts, baselineMs) },
        acknowledgedToBaseline: Number((rate(posts, acknowledgedMs) / rate(posts, baselineMs)).toFixed(3)),
        secondRun: {
          outcomes: secondOutcomes,
          ms: Math.round(secondMs),
          postsPerSecond: rate(posts, secondMs),
          bitlyWrites: secondBitlyWrites,
        },
        problems,
        ok: problems.length === 0,
      },
      null,
      2,
    ),
  );
  if (problems.length > 0) process.exitCode = 1;
} finally {
  // SIGTERM first: a profiled process writes its profile as it exits.
  child.process.kill('SIGTERM');
  await Promise.race([
    new Promise((r) => child.process.once('exit', r)),
    new Promise((r) => setTimeout(r, 15_000)),
  ]);
  child.process.kill('SIGKILL');
  await web.stop({ killAfterMs: 15_000 });
  await redis.close();
  await h.close();
  await fake?.stop();
}
