// An election night: WordPress publishes at a steady rate for minutes (each post updated once a little later:
// a new title, and for one post in BENCH_SLUG_EVERY a new permalink too), against the real web entry and the real worker entry, each in its own process,
// real Postgres, Redis and a Temporal dev server, with Bitly as the HTTP fake. It measures, per post:
//
//   - publish → shareable: from sending the signed `post.published` until the code answers a 301 to the
//     permalink on our front AND the Bitly fake holds the code as its back-half;
//   - new permalink → followed: from sending such a `post.updated` until our front and Bitly both lead to it;
//
// and, every 5 s, the backlog: posts sent but not yet shareable, running workflows on the task queue and the sync
// queue's depth. Meanwhile the redirect is measured in alternating wrk rounds (-t1 -c50, 1,000 codes at random)
// against our web process and the bare node:http + Map server (bench/redirect/bare_map_server.ts), both serving
// the same 1,000 links, so the ratio is read while the burst runs, not on a quiet machine.
//
//   npx tsx bench/publish_burst.ts [perSecond=20] [seconds=600]
//   BENCH_UPDATE_AFTER_S=30       seconds between a post's publish and its update (0: no updates)
//   BENCH_SLUG_EVERY=20           one update in this many also changes the permalink (a retarget)
//   BENCH_BITLY_PER_MINUTE=0      the fake's per-minute request limit (0: none; Bitly documents 100/min on
//                                 /v4/shorten for the smallest plans, far below an election night's rate)
//   BENCH_REDIRECT_ROUND_S=15     length of each wrk round during the burst (0: no redirect load)
//   BENCH_WORKER_NODE_OPTIONS=    NODE_OPTIONS of the worker process alone (e.g. --max-old-space-size=384)
//   BENCH_FROM_BUILD=1            run the web and the worker as the container image does: `npm run build` first,
//                                 then dist/ through scripts/lifeline.sh (default: from source through tsx)
//
// The publishes are open-loop: the n-th is sent at start + n / perSecond whatever the earlier ones are doing,
// as a newsroom's editors do not wait for each other.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { startBitlyFake } from '../devkit/fakes/bitly_fake.ts';
import { harnessWebEnv, startEntry } from '../devkit/harness/entry_process.ts';
import { createHarness, eventually } from '../devkit/harness/harness.ts';
import { uniqueId } from '../devkit/harness/temporal.ts';
import { wordpressEvent } from '../devkit/harness/wordpress_events.ts';
import { startWorkerProcess } from '../devkit/harness/worker_process.ts';
import { signWebhook } from '../lib/auth/webhook_signature.ts';
import { getFreePort } from '../scripts/dev_server.ts';
import { webNodeFlags } from '../scripts/web_node_flags.ts';
import { getSyncQueueWorkflowId } from '../workflows/contract.ts';
import { commandOf, descendantsOf, pidsNamed, rssOf } from './process_stats.ts';
import { formatLoad } from './redirect/bench_report.ts';
import { CODE_PREFIX, ROOT } from './redirect/bench_settings.ts';
import { runWrk, type WrkResult } from './redirect/run_wrk.ts';
import { type ResourceSampler, startResourceSampler } from './resource_sampler.ts';

const PER_SECOND = Number(process.argv[2] ?? 20);
const SECONDS = Number(process.argv[3] ?? 600);
const UPDATE_AFTER_S = Number(process.env.BENCH_UPDATE_AFTER_S ?? 30);
const SLUG_EVERY = Number(process.env.BENCH_SLUG_EVERY ?? 20);
const BITLY_PER_MINUTE = Number(process.env.BENCH_BITLY_PER_MINUTE ?? 0);
const ROUND_S = Number(process.env.BENCH_REDIRECT_ROUND_S ?? 15);
const REDIRECT_LINKS = 1_000;
const SITE = 'burst';
const PREFIX = `${uniqueId('lifeline-burst')}:`;
const PROBE_UA = 'LifelineProbe/bench';

/**
 * What the sync queue's drainer did during the run, from its histories: batches and their sizes, how long its
 * activity and workflow tasks waited for the worker (schedule → start), how long a batch ran, and the gaps
 * in which it did nothing while woken.
 */
async function describeDrainer(client: Client, workflowId: string): Promise<string> {
  const at = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
  const sizes: number[] = [];
  const activityWaits: number[] = [];
  const batchRuns: number[] = [];
  const taskWaits: number[] = [];
  let signals = 0;
  let runs = 0;
  for await (const execution of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    runs++;
    const history = await client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
    const scheduled = new Map<number, { name: string; at: number; codes: number }>();
    const activityStarts = new Map<number, number>();
    let taskScheduledAt = 0;
    for (const event of history.events ?? []) {
      const t = at(event.eventTime);
      if (event.workflowExecutionSignaledEventAttributes) signals++;
      if (event.workflowTaskScheduledEventAttributes) taskScheduledAt = t;
      if (event.workflowTaskStartedEventAttributes) taskWaits.push(t - taskScheduledAt);
      const s = event.activityTaskScheduledEventAttributes;
      if (s) {
        const data = s.input?.payloads?.[0]?.data;
        const codes =
          s.activityType?.name === 'syncLinkBatch' && data
            ? (JSON.parse(Buffer.from(data).toString('utf8')) as { codes: string[] }).codes.length
            : 0;
        scheduled.set(Number(event.eventId), { name: s.activityType?.name ?? '?', at: t, codes });
      }
      const st = event.activityTaskStartedEventAttributes;
      if (st) {
        const from = scheduled.get(Number(st.scheduledEventId));
        if (from) activityWaits.push(t - from.at);
        activityStarts.set(Number(st.scheduledEventId), t);
      }
      const done = event.activityTaskCompletedEventAttributes;
      if (done) {
        const from = scheduled.get(Number(done.scheduledEventId));
        if (from?.name === 'syncLinkBatch') {
          sizes.push(from.codes);
          batchRuns.push(t - (activityStarts.get(Number(done.scheduledEventId)) ?? from.at));
        }
      }
    }
  }
  const p = (xs: number[], q: number) => (xs.length ? Math.round(percentile(xs, q)) : 0);
  return (
    `sync-queue drainer: ${runs} runs, ${sizes.length} batches (codes p50 ${p(sizes, 50)}, max ${Math.max(0, ...sizes)}), ` +
    `${signals} wake-ups; activity schedule → start p50 ${p(activityWaits, 50)} ms, max ${p(activityWaits, 100)} ms; ` +
    `workflow task schedule → start p50 ${p(taskWaits, 50)} ms, p99 ${p(taskWaits, 99)} ms, max ${p(taskWaits, 100)} ms; ` +
    `batch run p50 ${p(batchRuns, 50)} ms, max ${p(batchRuns, 100)} ms`
  );
}

const say = (msg: string) => process.stderr.write(`[burst] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const permalink = (postId: number, rev = '') => `https://news.example/2026/11/03/election-${postId}${rev}/`;
function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const ms = (x: number) => (Number.isNaN(x) ? '—' : `${Math.round(x)} ms`);

const fake = await startBitlyFake({ domains: ['sho.rt'] });
fake.perMinuteLimit = BITLY_PER_MINUTE;
const env = {
  ...fake.env(),
  REDIS_URL: 'redis://127.0.0.1:6379',
  REDIS_KEY_PREFIX: PREFIX,
  SAFETY_TRUSTED_HOSTS: 'news.example',
  LOG_LEVEL: 'silent',
  // The breaker on mass change by WordPress (ADR 0057) allows max(2% of a site's links, 50) retargets an hour;
  // this site starts empty, where a large newsroom's 2% is tens of thousands: the floor stands in for that.
  WORDPRESS_BREAKER_MIN: '100000',
};
const h = await createHarness({ env });
const tmp = mkdtempSync(join(tmpdir(), 'lifeline-burst-'));

// The 1,000 links both servers answer (bk1…bk1000, the redirect bench's codes, so its wrk script asks for them).
await h.db.sql`
  INSERT INTO links (code, target_url, status, safety, origin, owner)
  SELECT ${CODE_PREFIX} || i, 'https://news.example.com/2026/11/03/live-' || i || '?ref=burst',
         'active', 'clean', 'import', 'bench'
  FROM generate_series(1, ${REDIRECT_LINKS}::int) AS i`;
const linksFile = join(tmp, 'links.tsv');
const rows = await h.db.sql<{ code: string; target_url: string }[]>`
  SELECT code, target_url FROM links WHERE owner = 'bench' ORDER BY code`;
writeFileSync(linksFile, rows.map((r) => `${r.code}\t${r.target_url}\n`).join(''));

// Our web entry as production runs it (the web tier's Node flags), and the worker entry.
const webPort = await getFreePort();
const webUrl = `http://127.0.0.1:${webPort}`;
// BENCH_FROM_BUILD=1: both from dist/, built now from this tree, with the flags scripts/lifeline.sh gives them.
const fromBuild = process.env.BENCH_FROM_BUILD === '1';
if (fromBuild) {
  const build = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error(`npm run build failed (exit ${build.status})`);
}
const web = startEntry('main.ts', {
  env: { ...harnessWebEnv(h, webUrl), ...env, LOG_LEVEL: 'warn' },
  nodeFlags: webNodeFlags(ROOT),
  keepChars: 20_000,
  ...(fromBuild ? { built: 'web' as const } : {}),
});
// BENCH_WORKER_NODE_OPTIONS: Node flags for the worker alone (e.g. its heap bound), as NODE_OPTIONS.
const workerNodeOptions = process.env.BENCH_WORKER_NODE_OPTIONS;
const worker = startWorkerProcess({
  h,
  env: { ...env, LOG_LEVEL: 'info', ...(workerNodeOptions ? { NODE_OPTIONS: workerNodeOptions } : {}) },
  built: fromBuild,
});
const barePort = await getFreePort();
const bare = spawn(process.execPath, ['--import', 'tsx', 'bench/redirect/bare_map_server.ts'], {
  cwd: ROOT,
  env: { PATH: process.env.PATH ?? '', BENCH_LINKS_FILE: linksFile, PORT: String(barePort) },
  stdio: 'ignore',
});
const bareUrl = `http://127.0.0.1:${barePort}`;

/**
 * Samples, every second, the CPU used by each part: our web and worker processes (their trees), the Temporal dev
 * server, Postgres (every backend on the machine) and this process (the publishes' sender and the watcher). Each
 * process counts what it used between two samples, so a Postgres backend that exits mid-burst takes away at most
 * its last second, never what it used before (bench/resource_sampler.ts).
 */
function sampleCpu(): ResourceSampler {
  const tree = (pid: number | undefined) => (pid ? [pid, ...descendantsOf(pid)] : []);
  return startResourceSampler({
    intervalMs: 1000,
    groups: () => ({
      web: tree(web.child.pid),
      worker: tree(worker.process.pid),
      temporal: descendantsOf(process.pid).filter((pid) => commandOf(pid) === 'temporal'),
      postgres: pidsNamed('postgres'),
      bench: [process.pid],
    }),
  });
}

async function status(url: string): Promise<number> {
  return fetch(url, { redirect: 'manual', headers: { 'User-Agent': PROBE_UA } }).then(
    (r) => r.status,
    () => 0,
  );
}

interface Post {
  postId: number;
  sentAt: number;
  code?: string;
  shareableAt?: number;
  /** When its update was sent; `newSlug`: the update moved the permalink. */
  updateSentAt?: number;
  newSlug?: boolean;
  followedAt?: number;
}
const posts = new Map<number, Post>();
const failures: string[] = [];
const backlog: { t: number; waiting: number; running: number; syncQueue: number }[] = [];
const rounds: { server: string; phase: string; r: WrkResult }[] = [];

async function sendEvent(event: ReturnType<typeof wordpressEvent>): Promise<void> {
  const body = JSON.stringify(event);
  const res = await fetch(`${webUrl}/api/v1/hooks/wordpress`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Lifeline-Signature': await signWebhook(h.webhookSecret, body, Date.now() / 1000),
    },
    body,
  });
  if (res.status !== 202) failures.push(`${event.event} ${event.postId}: ${res.status} ${await res.text()}`);
  else await res.body?.cancel();
}

/**
 * Ids are taken when a transaction inserts and seen when it commits, so a transaction that took a lower id can
 * commit after a higher one was read: the watcher reads this far behind its cursor again (the worker's and
 * web's pools hold a few dozen transactions at most, each with a few entries).
 */
const AUDIT_REREAD = 1_000;

/**
 * Learns each post's code from the activations' audit entries near a cursor (a range read of the primary key,
 * so the watcher's own cost stays flat however many posts wait), then checks the front and the fake for each
 * post still waiting (every 200 ms).
 */
async function watchPosts(until: () => boolean): Promise<void> {
  let auditCursor = 0;
  while (!until()) {
    const activated = await h.db.sql<{ id: string; postId: number; code: string }[]>`
      SELECT a.id::text AS id, l.post_id::int AS "postId", l.code
      FROM audit_log a JOIN links l ON l.code = a.code
      WHERE a.id > ${Math.max(0, auditCursor - AUDIT_REREAD)} AND a.action = 'link.status_changed'
        AND l.site = ${SITE}
      ORDER BY a.id`;
    for (const a of activated) {
      auditCursor = Math.max(auditCursor, Number(a.id));
      const post = posts.get(a.postId);
      if (post) post.code ??= a.code;
    }
    const waiting = [...posts.values()].filter(
      (p) => p.shareableAt === undefined || (p.newSlug === true && p.followedAt === undefined),
    );
    await Promise.all(
      waiting.map(async (p) => {
        if (p.code === undefined) return;
        // Shareable on either permalink (an update may overtake a slow publish); followed on the new one only.
        const wanted = new Set([permalink(p.postId), ...(p.newSlug ? [permalink(p.postId, '-live')] : [])]);
        const onBitly = fake.linkByKeyword(p.code)?.longUrl;
        if (onBitly === undefined || !wanted.has(onBitly)) return;
        const res = await fetch(`${webUrl}/${p.code}`, {
          redirect: 'manual',
          headers: { 'User-Agent': PROBE_UA },
        }).catch(() => undefined);
        const location = res?.headers.get('Location') ?? '';
        await res?.body?.cancel();
        if (res?.status !== 301 || !wanted.has(location)) return;
        const now = performance.now();
        p.shareableAt ??= now;
        if (p.newSlug && location === onBitly && location === permalink(p.postId, '-live'))
          p.followedAt ??= now;
      }),
    );
    await sleep(200);
  }
}

/** A process's resident memory with its tree (the entry's wrapper and the Node process that runs it), MiB. */
function treeRssMiB(pid: number | undefined): number {
  const pids = pid ? [pid, ...descendantsOf(pid)] : [];
  return Math.round(pids.reduce((total, p) => total + rssOf(p), 0) / 2 ** 20);
}
const workerRssMiB = () => treeRssMiB(worker.process.pid);
const webRssMiB = () => treeRssMiB(web.child.pid);
let webRssPeak = 0;
let workerRssPeak = 0;

async function sampleBacklog(started: number, until: () => boolean): Promise<void> {
  while (!until()) {
    workerRssPeak = Math.max(workerRssPeak, workerRssMiB());
    webRssPeak = Math.max(webRssPeak, webRssMiB());
    const waiting = [...posts.values()].filter((p) => p.shareableAt === undefined).length;
    const running = await h.temporal.client.workflow
      .count(`TaskQueue = "${h.taskQueue}" AND ExecutionStatus = "Running"`)
      .then(
        (c) => c.count,
        () => -1,
      );
    const [q] = await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM link_sync_queue`;
    backlog.push({ t: Math.round((performance.now() - started) / 1000), waiting, running, syncQueue: q!.n });
    await sleep(5_000);
  }
}

async function redirectRounds(phase: string, until: () => boolean): Promise<void> {
  if (ROUND_S <= 0) return;
  let i = 0;
  while (!until()) {
    const order = i++ % 2 === 0 ? ['ours', 'bare'] : ['bare', 'ours'];
    for (const server of order) {
      const r = await runWrk(server === 'ours' ? webUrl : bareUrl, ROUND_S, {
        codes: REDIRECT_LINKS,
        order: 'random',
      });
      rounds.push({ server, phase, r });
      say(`${phase} ${server}: ${Math.round(r.rps)} req/s, p99 ${(r.p99_us / 1000).toFixed(2)} ms`);
    }
  }
}

let exitCode = 0;
try {
  await eventually(async () => ((await status(`${webUrl}/${CODE_PREFIX}1`)) === 301 ? true : undefined), {
    timeoutMs: 120_000,
    what: () => `our web process to answer (${web.output().slice(-2000)})`,
  });
  await eventually(async () => ((await status(`${bareUrl}/${CODE_PREFIX}1`)) === 301 ? true : undefined), {
    timeoutMs: 60_000,
    what: 'the bare Map server',
  });
  await eventually(async () => (worker.ready ? true : undefined), { timeoutMs: 120_000, what: 'the worker' });
  // Warm both servers' caches and JITs, and the publish path (the first workflows of a worker are slow).
  for (const url of [webUrl, bareUrl]) await runWrk(url, 5, { codes: REDIRECT_LINKS, order: 'seq' });
  for (let i = 0; i < 10; i++)
    await sendEvent(
      wordpressEvent('post.published', { site: SITE, postId: 900_000 + i, permalink: permalink(i) }),
    );

  // Before the burst: the same rounds on the quiet system, for the ratio's reference.
  let quietDone = false;
  const quietUntil = Date.now() + 4 * ROUND_S * 1000;
  await redirectRounds('before', () => {
    quietDone ||= Date.now() >= quietUntil;
    return quietDone;
  });

  const loadBefore = formatLoad();
  say(
    `burst: ${PER_SECOND} publishes/s for ${SECONDS} s, updates after ${UPDATE_AFTER_S} s; load ${loadBefore}`,
  );
  const started = performance.now();
  const cpuSampler = sampleCpu();
  const cpuFrom = Date.now();
  const workerRssAtStart = workerRssMiB();
  const webRssAtStart = webRssMiB();
  const total = Math.round(PER_SECOND * SECONDS);
  let sent = 0;
  let burstOver = false;
  const allFollowed = () =>
    burstOver &&
    [...posts.values()].every(
      (p) => p.shareableAt !== undefined && (p.newSlug !== true || p.followedAt !== undefined),
    );
  const watchers = Promise.all([
    watchPosts(allFollowed),
    sampleBacklog(started, allFollowed),
    redirectRounds('burst', () => burstOver),
  ]);
  const sends: Promise<void>[] = [];
  while (sent < total) {
    const due = started + (sent * 1000) / PER_SECOND;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const postId = ++sent;
    const post: Post = { postId, sentAt: performance.now() };
    posts.set(postId, post);
    sends.push(
      sendEvent(
        wordpressEvent('post.published', {
          site: SITE,
          postId,
          permalink: permalink(postId),
          title: `Results ${postId}`,
        }),
      ),
    );
    if (UPDATE_AFTER_S > 0)
      sends.push(
        sleep(UPDATE_AFTER_S * 1000).then(async () => {
          const newSlug = SLUG_EVERY > 0 && postId % SLUG_EVERY === 0;
          post.updateSentAt = performance.now();
          post.newSlug = newSlug;
          await sendEvent(
            wordpressEvent('post.updated', {
              site: SITE,
              postId,
              permalink: permalink(postId, newSlug ? '-live' : ''),
              title: `Results ${postId} (updated)`,
            }),
          );
        }),
      );
  }
  await Promise.all(sends);
  burstOver = true;
  const sentFor = (performance.now() - started) / 1000;
  // A run that never settles still reports what it measured, with the posts it gave up on.
  let gaveUp = false;
  await Promise.race([
    watchers,
    sleep(30 * 60_000).then(() => {
      gaveUp = true;
    }),
  ]);
  const drainedAfter = (performance.now() - started) / 1000;
  const cpuTo = Date.now();
  await cpuSampler.stop();
  const cpuSpent = Object.entries(cpuSampler.between(cpuFrom, cpuTo)?.cpu ?? {})
    .map(([part, v]) => `${part} ${Math.round(v)}`)
    .join(', ');
  const loadAfter = formatLoad();

  const unsettled = [...posts.values()].filter(
    (p) => p.shareableAt === undefined || (p.newSlug === true && p.followedAt === undefined),
  );
  const shareable = [...posts.values()]
    .filter((p) => p.shareableAt !== undefined)
    .map((p) => p.shareableAt! - p.sentAt);
  const followed = [...posts.values()]
    .filter((p) => p.followedAt)
    .map((p) => p.followedAt! - p.updateSentAt!);
  const median = (xs: number[]) => percentile(xs, 50);
  const rate = (phase: string, server: string) =>
    median(rounds.filter((r) => r.phase === phase && r.server === server).map((r) => r.r.rps));
  const p99 = (phase: string, server: string) =>
    median(rounds.filter((r) => r.phase === phase && r.server === server).map((r) => r.r.p99_us));
  const peak = backlog.reduce(
    (m, b) => (b.waiting > m.waiting ? b : m),
    backlog[0] ?? { t: 0, waiting: 0, running: 0, syncQueue: 0 },
  );
  const lines = [
    `publish burst: ${total.toLocaleString('en')} publishes at ${PER_SECOND}/s over ${sentFor.toFixed(0)} s` +
      `${UPDATE_AFTER_S > 0 ? `, each updated ${UPDATE_AFTER_S} s later` : ''}; Bitly fake limit ` +
      `${BITLY_PER_MINUTE > 0 ? `${BITLY_PER_MINUTE}/min` : 'none'} (429s answered: ${fake.stats.rateLimited})`,
    `load ${loadBefore} → ${loadAfter}; everything shareable and followed ${drainedAfter.toFixed(0)} s after the first publish`,
    `CPU seconds from the first publish to the last followed: ${cpuSpent} (wall ${drainedAfter.toFixed(0)} s, ` +
      `two cores: ${Math.round(2 * drainedAfter)} CPU s in all)`,
    `worker RSS (its process tree, ${fromBuild ? 'built: dist/ through scripts/lifeline.sh' : 'from source through tsx'}): ` +
      `${workerRssAtStart} MiB at the first publish, peak ${workerRssPeak} MiB; web ${webRssAtStart} → peak ${webRssPeak} MiB`,
    `publish → shareable: p50 ${ms(percentile(shareable, 50))}, p90 ${ms(percentile(shareable, 90))}, ` +
      `p99 ${ms(percentile(shareable, 99))}, max ${ms(Math.max(...shareable))}`,
    `new permalink → followed: p50 ${ms(percentile(followed, 50))}, p99 ${ms(percentile(followed, 99))} ` +
      `(${followed.length} of ${[...posts.values()].filter((p) => p.updateSentAt).length} updates moved the permalink)`,
    `backlog peak at ${peak.t} s: ${peak.waiting} posts waiting, ${peak.running} running workflows, ` +
      `sync queue ${peak.syncQueue}; last sample: ${JSON.stringify(backlog.at(-1))}`,
    ...(ROUND_S > 0
      ? [
          `redirect before: ours ${Math.round(rate('before', 'ours'))} req/s = ` +
            `${((rate('before', 'ours') / rate('before', 'bare')) * 100).toFixed(1)}% of bare Map ` +
            `(p99 ${(p99('before', 'ours') / p99('before', 'bare')).toFixed(2)}×)`,
          `redirect during the burst: ours ${Math.round(rate('burst', 'ours'))} req/s = ` +
            `${((rate('burst', 'ours') / rate('burst', 'bare')) * 100).toFixed(1)}% of bare Map ` +
            `(p99 ${(p99('burst', 'ours') / p99('burst', 'bare')).toFixed(2)}×; ${rounds.filter((r) => r.phase === 'burst').length} rounds)`,
        ]
      : []),
    ...(gaveUp
      ? [
          `GAVE UP 30 minutes after the burst: ${unsettled.length} posts not shareable or not followed ` +
            `(first: ${unsettled
              .slice(0, 5)
              .map((p) => `${p.postId}${p.code ? ` as ${p.code}` : ', no code seen'}`)
              .join('; ')})`,
        ]
      : []),
    `failed requests: ${failures.length}${failures.length ? ` (first: ${failures[0]})` : ''}; redirect errors ` +
      `${rounds.reduce((n, r) => n + r.r.non_3xx + r.r.socketErrors, 0)}`,
  ];
  lines.push(await describeDrainer(h.temporal.client, getSyncQueueWorkflowId(h.taskQueue)));
  for (const line of lines) process.stdout.write(`${line}\n`);
  process.stdout.write(
    `backlog series (t s: waiting/running/sync queue): ${backlog.map((b) => `${b.t}:${b.waiting}/${b.running}/${b.syncQueue}`).join(' ')}\n`,
  );
  if (failures.length > 0 || gaveUp) exitCode = 1;
} catch (error) {
  say(`failed: ${(error as Error).stack}`);
  say(`web output tail: ${web.output().slice(-3000)}`);
  exitCode = 1;
} finally {
  bare.kill('SIGTERM');
  await web.stop({ killAfterMs: 10_000 });
  if (worker.process.exitCode === null && worker.process.signalCode === null) {
    const exited = new Promise((r) => worker.process.once('exit', r));
    worker.process.kill('SIGTERM');
    await exited;
  }
  await h.close();
  await fake.stop();
}
process.exit(exitCode);
