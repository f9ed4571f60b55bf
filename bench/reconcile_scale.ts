// Every leg of one full reconciliation, and one safety re-scan pass, on a copy of an archive seeded by
// bench/seed_links.ts (100,000 or 10,000,000 links: docs/BENCHMARKS.md, "Ten million links"), so that what each
// leg costs can be compared between sizes.
//
//   LIFELINE_TEST_DATABASE_TEMPLATE=<seeded db> npx tsx bench/reconcile_scale.ts
//     [--legs=bitly,serving,expiry,wordpress,rescan] [--no-settle | --settle-by-sql] [--rescan-minutes=N]
//
// The harness clones the template into a database of its own (the template is only read, by CREATE DATABASE …
// TEMPLATE), runs a real Temporal dev server and the real worker in this process, and drops the copy at the end
// (also on Ctrl-C). Before anything is timed, each leg's counterpart is made to agree with the copy, the product's
// own way where it has one (each step timed as setup):
//   - `sweep`: the expiry sweeper is started as the worker's entry starts it (the seed leaves 2% of links active
//     past their expiry, "not yet swept"); the bench waits until it has expired them and the sync-queue drainer
//     has taken them to the serving store and Bitly.
//   - `bitly seed`: Bitly (the fake, in the fakes' process) holds, under the vendor id each `vendor_links` row
//     records (`bit.ly/<code>`, so BITLY_DOMAIN is `bit.ly`), what a finished sync leaves for a `synced` row: the
//     long URL and archived flag toVendorTarget gives for the link now, tagged as ours, with the link's title. A
//     `failed` row has no bitlink (its sync never got through); a `collision` row's back-half is held outside our
//     group, which the group listing never shows, so it has none either.
//   - `listing build`: each site of the copy's `wordpress_sites` is a signed listing fake (its rest_url in the
//     copy pointed at it, WORDPRESS_WEBHOOK_SECRET shared) with one post per WordPress-bound link: published
//     with the link's target as permalink when the link answers (active, blocked, pending), a draft when it does
//     not (expired, gone), trashed when the link is deleted.
//   - `serving fill`: the serving store (Redis, a key prefix of its own, deleted at the end) is filled as an
//     operator refills a lost one (DEPLOYING.md, "Backups"): a repairing reconciliation, started at its serving
//     phase, whose serving leg rewrites every record through the resolver (its expiry and WordPress legs run too,
//     in repair mode, and find nothing).
// Then one reconciliation in check mode (`repair: false`) through the real workflow and worker. Each leg's wall
// time is read from the workflow's history (its first activity scheduled → its last completed, across
// continue-as-new), its counts from the activities' results and the run's report. What it still finds is drift
// in the seed itself, which no counterpart can hide: every other link has no Bitly copy (`vendor_links` for 47%),
// so the `missing` pass finds the active ones (41,700 at 100,000, failed and collision rows included).
// Then the re-scan: the Safe Browsing fake lists each live link's URL the copy holds as blocked (MALWARE) or warn
// (UNWANTED_SOFTWARE), and nothing else. The seed leaves 3% of links unscanned (`unknown`, pending ones
// included), which any complete check changes to clean: a first pass (`rescan settle`) does that, the bench waits
// until the sync queue has carried those changes (ADR 0097), and the timed pass is the second, which changes nothing.
// `--no-settle` times the first pass instead (its changes included). `--settle-by-sql` settles them with one
// statement instead of a pass (each unscanned link clean, checked a minute before the timed pass starts, as a pass
// would leave it; no sync queued, the timed pass changing nothing either way): the timed pass is then a pass that
// changes nothing, over rows laid out as the seed left them rather than as a first pass's updates left them, in
// about half the time of the two passes. `--rescan-minutes=N` stops the timed pass after
// N minutes and reports what it verified by then (a whole first pass of ten million links took 46 minutes).
// After the check it prints `EXPLAIN (ANALYZE, BUFFERS)` of the statement each Postgres-side pass repeats per
// chunk, at the middle of the table (run once just before, its time printed too; marks a pass joins are
// inserted for a run of its own and analyzed first, then deleted).
// Before those, a table of where each leg's time went (bench/resource_sampler.ts, every 0.5 s from the worker's
// start): the CPU seconds of this process (the worker), the Temporal dev server, Postgres (every `postgres`
// process of the machine; in parentheses, of it in the kernel), the fakes' process and Redis; the machine's cores
// (user, kernel, idle, iowait: what no group accounts for ran elsewhere, such as kernel threads or a short-lived
// autovacuum worker); how busy the worker's and the fakes' event loops were; Postgres's blocks read into shared
// buffers against those found there, the time the reads took (with `track_io_timing` on, which the bench does not
// set: `ALTER SYSTEM SET track_io_timing = on` on the cluster), buffers its backends wrote out themselves, WAL; the
// disk's reads and the kernel's memory-reclaim scans; and the main ones in microseconds an item, to compare sizes.
//
// --legs: `bitly` (its group listing, then the pass over the active links Bitly lacks, `missing`), `serving`,
// `wordpress`, `rescan`. Left out: Bitly or the serving store is not configured (the workflow skips the leg), the
// copy's `wordpress_sites` rows are deleted, no re-scan. `expiry` cannot be left out (the workflow always runs
// it; two statements and a describe of the sweeper).
//
// Memory: the fakes (Bitly, Safe Browsing, the listings) live in a child process of their own,
// bench/reconcile_fakes.ts, driven over its IPC channel. At 100,000 links they take ~41 MB of heap: Bitly ~720
// bytes a bitlink, the listings ~240 a post. At 10,000,000 links (4.7 million bitlinks, 3.9 million posts) that
// is ~4.4 GB, which in this process every collection of the worker's would scan, distorting the pace measured:
// apart, the worker's heap and its collections are its own (both heaps are printed, and the child's RSS).
// The child is forked with a heap limit of its own (--max-old-space-size=8192: past Node's default on this
// machine, 4.1 GB), so this process needs none. Redis then holds ~9.6 million serving records (~290 bytes a
// record, printed: ~2.8 GB). docs/BENCHMARKS.md, "Reconciliation and re-scan at scale", has the figures.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createClient } from '@redis/client';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import postgres from 'postgres';
import type { FakePost } from '../devkit/fakes/wordpress_listing_fake.ts';
import { createHarness } from '../devkit/harness/harness.ts';
import { deleteKeysByPrefix } from '../devkit/harness/redis_keys.ts';
import { uniqueId } from '../devkit/harness/temporal.ts';
import { wakeExpirySweeper } from '../lib/links/expire_link.ts';
import { OVERDUE_GRACE_MS } from '../lib/reconcile/reconcile_expiry_timers.ts';
import { ABSENT_STRETCH } from '../lib/reconcile/wordpress_absent.ts';
import { randomToken } from '../lib/shared/crypto.ts';
import { listLinksByPostIds } from '../lib/stores/backfill_store.ts';
import { getExpiryBacklog, listLinksToRescan } from '../lib/stores/link_lifecycle_store.ts';
import type { LinkRow } from '../lib/stores/link_rows.ts';
import {
  findCodeWindowEnd,
  getVendorTargetRowsByCodes,
  listVendorLinks,
  QUALIFIED_LINK_COLUMNS,
} from '../lib/stores/link_store.ts';
import {
  listLinksAfter,
  listOverdueExpiries,
  listUnseenActiveCodes,
  UNSEEN_WINDOW,
} from '../lib/stores/reconcile_store.ts';
import type { Sql } from '../lib/stores/sql.ts';
import { findPostIdStretchEnd, listLinksAbsentFromListing } from '../lib/stores/wordpress_reconcile_store.ts';
import { createExpirySweeper } from '../lib/temporal/link_signals.ts';
import { BITLY_OWN_TAG } from '../lib/vendors/bitly.ts';
import { toVendorTarget } from '../lib/vendors/vendor_target.ts';
import type { ReconcileLinksInput, ReconcileReport, RescanReport } from '../workflows/contract.ts';
import { commandOf, descendantsOf, pidsNamed } from './process_stats.ts';
import type { BitlinkSeed, FakesCalls, FakesKind, FakesReady, FakesReply } from './reconcile_fakes.ts';
import {
  eventLoopBusyMs,
  machineCounters,
  postgresCounters,
  type ResourceSampler,
  startResourceSampler,
} from './resource_sampler.ts';

const ALL_LEGS = ['bitly', 'serving', 'expiry', 'wordpress', 'rescan'] as const;
const legsArg = process.argv.find((a) => a.startsWith('--legs='))?.slice('--legs='.length);
const legs = new Set((legsArg ?? ALL_LEGS.join(',')).split(',').filter(Boolean));
const settle = !process.argv.includes('--no-settle');
const settleBySql = process.argv.includes('--settle-by-sql');
if (settleBySql && !settle) throw new Error('--settle-by-sql and --no-settle: choose one');
const rescanMinutesArg = process.argv
  .find((a) => a.startsWith('--rescan-minutes='))
  ?.slice('--rescan-minutes='.length);
const rescanMinutes = rescanMinutesArg === undefined ? null : Number(rescanMinutesArg);
if (rescanMinutes !== null && !(rescanMinutes > 0))
  throw new Error(`--rescan-minutes: ${rescanMinutesArg} is not a number of minutes above 0`);
for (const leg of legs) {
  if (!(ALL_LEGS as readonly string[]).includes(leg))
    throw new Error(`--legs: ${leg} is not one of ${ALL_LEGS.join(', ')}`);
}
const template = process.env.LIFELINE_TEST_DATABASE_TEMPLATE;
if (!template) {
  throw new Error(
    'LIFELINE_TEST_DATABASE_TEMPLATE=<a database seeded by bench/seed_links.ts> is required (the bench runs on a copy of it)',
  );
}

const BITLY_DOMAIN = 'bit.ly';
/** An activity attempt this high is past every retry the legs make of their own (a site's listing: 3). */
const STUCK_ATTEMPTS = 4;
const PREFIX = `${uniqueId('lifeline-bench')}:`;
const SECRET = `whsec_bench_${randomToken(32)}`;
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const started = performance.now();
const clock = () => `${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s`;
const say = (message: string) => console.log(`[reconcile-scale ${clock()}] ${message}`);
// A full collection before each heap reading (the worker's size), without asking for --expose-gc.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const heapMb = () => {
  collect();
  return process.memoryUsage().heapUsed / 2 ** 20;
};
const n = (x: number) => x.toLocaleString('en');

/** One row of the summary: a timed leg or a setup step. */
interface Row {
  leg: string;
  items: number;
  what: string;
  seconds: number;
  drift: string;
  setup?: boolean;
}
const rows: Row[] = [];
const loadAtStart = loadAverage();
say(`template ${template}, legs ${[...legs].join(',')}, load average ${loadAtStart}`);

/** The fakes' process (bench/reconcile_fakes.ts): what it said when ready, its requests, its stop. */
interface Fakes {
  ready: FakesReady;
  pid: number;
  ask<K extends FakesKind>(kind: K, fields: FakesCalls[K]['ask']): Promise<FakesCalls[K]['reply']>;
  /** Asks it to stop, and kills it when it has not exited within a few seconds. */
  stop(): Promise<void>;
}

/** Forks the fakes' process with the fakes the legs need; once they are serving. */
async function startFakes(): Promise<Fakes> {
  const args = [
    ...(legs.has('bitly') ? [`--bitly-domain=${BITLY_DOMAIN}`] : []),
    ...(legs.has('rescan') ? ['--safe-browsing'] : []),
  ];
  const child = fork(new URL('./reconcile_fakes.ts', import.meta.url), args, {
    // In the checkout, where `--import tsx` finds tsx.
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    // A heap limit of its own (~4.6 GB of fakes at ten million links), and structured clones on the channel
    // (the seeds' Dates).
    execArgv: ['--max-old-space-size=8192', '--import', 'tsx'],
    serialization: 'advanced',
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let gone: string | null = null;
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      gone = `the fakes' process exited (${signal ?? `code ${code}`})`;
      // Mid-run (out of memory, say), the legs would only see their vendor refuse connections: say why.
      if (!stopping) say(gone);
      for (const request of pending.values()) request.reject(new Error(gone));
      pending.clear();
      resolve();
    }),
  );
  const ready = await new Promise<FakesReady>((resolve, reject) => {
    child.once('message', (message) => resolve(message as FakesReady));
    void exited.then(() => reject(new Error(`${gone} before it was ready`)));
  });
  child.on('message', (message) => {
    const reply = message as FakesReply;
    const request = pending.get(reply.id);
    if (!request) return;
    pending.delete(reply.id);
    if (reply.ok) request.resolve(reply.value);
    else request.reject(new Error(`the fakes' process: ${reply.error}`));
  });
  let lastId = 0;
  const ask = <K extends FakesKind>(kind: K, fields: FakesCalls[K]['ask']) =>
    new Promise<FakesCalls[K]['reply']>((resolve, reject) => {
      if (gone) return reject(new Error(gone));
      const id = ++lastId;
      pending.set(id, { resolve: (value) => resolve(value as FakesCalls[K]['reply']), reject });
      child.send({ ...fields, id, kind }, (error) => {
        if (!error) return;
        pending.delete(id);
        reject(error);
      });
    });
  const stop = async () => {
    stopping = true;
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    if (!gone) void ask('stop', {}).catch(() => {});
    await exited;
    clearTimeout(kill);
  };
  return { ready, pid: child.pid ?? 0, ask, stop };
}

const fakes = await startFakes();
const fakesStats = () => fakes.ask('stats', {});
const listingSites: string[] = [];
const copyStarted = performance.now();
const h = await createHarness({
  env: {
    ...(fakes.ready.bitlyEnv ?? {}),
    ...(fakes.ready.safeBrowsing
      ? {
          SAFE_BROWSING_API_KEY: fakes.ready.safeBrowsing.apiKey,
          SAFE_BROWSING_API_BASE_URL: fakes.ready.safeBrowsing.baseUrl,
        }
      : {}),
    ...(legs.has('serving') ? { REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: PREFIX } : {}),
    // The seeded archive's two short domains (bench/seed_links.ts --other-domain).
    SHORT_BASE_URL: 'http://links.example',
    SHORT_DOMAINS: 'links.example,x.example',
    WORDPRESS_WEBHOOK_SECRET: SECRET,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
  },
});
const sql = h.db.sql;
// Reading time is only counted with track_io_timing on (ALTER SYSTEM SET track_io_timing = on on the cluster).
const trackIoTiming = (
  await sql<{ on: boolean }[]>`SELECT current_setting('track_io_timing') = 'on' AS on`
)[0]?.on;
const client = h.temporal.client;
say(`copied ${template} to ${h.db.name} in ${((performance.now() - copyStarted) / 1000).toFixed(1)} s`);
const redis = legs.has('serving') ? createClient({ url: 'redis://127.0.0.1:6379' }) : undefined;
await redis?.connect();

/** What a leg's activities did, from a workflow's history (every run of its continue-as-new chain). */
interface Span {
  first: number;
  last: number;
  calls: number;
  attempts: number;
  read: number;
}

async function activitySpans(workflowId: string, firstRunId: string): Promise<Map<string, Span>> {
  const spans = new Map<string, Span>();
  const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
  for (let runId: string | undefined = firstRunId; runId; ) {
    const history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>> = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const scheduled = new Map<number, { type: string; at: number }>();
    const attempts = new Map<number, number>();
    runId = undefined;
    for (const event of history.events ?? []) {
      const at = ms(event.eventTime);
      const s = event.activityTaskScheduledEventAttributes;
      if (s) scheduled.set(Number(event.eventId), { type: s.activityType?.name ?? '?', at });
      const st = event.activityTaskStartedEventAttributes;
      if (st) attempts.set(Number(st.scheduledEventId), st.attempt ?? 1);
      const done = event.activityTaskCompletedEventAttributes;
      if (done) {
        const from = scheduled.get(Number(done.scheduledEventId));
        if (!from) continue;
        const payload = done.result?.payloads?.[0];
        const result = payload ? (defaultPayloadConverter.fromPayload(payload) as { read?: number }) : null;
        const span = spans.get(from.type) ?? {
          first: from.at,
          last: at,
          calls: 0,
          attempts: 0,
          read: 0,
        };
        span.first = Math.min(span.first, from.at);
        span.last = Math.max(span.last, at);
        span.calls++;
        span.attempts += attempts.get(Number(done.scheduledEventId)) ?? 1;
        span.read += typeof result?.read === 'number' ? result.read : 0;
        spans.set(from.type, span);
      }
      const next = event.workflowExecutionContinuedAsNewEventAttributes;
      if (next?.newExecutionRunId) runId = next.newExecutionRunId;
    }
  }
  return spans;
}

/**
 * The workflow's result. An activity retried past its own retries (a heartbeat timeout every time, say) would
 * keep a run going for ever: the bench stops it and names the activity and its last failure.
 */
async function result<T>(handle: WorkflowHandle): Promise<T> {
  let stuck: string | null = null;
  const watch = setInterval(() => {
    client.workflow
      .getHandle(handle.workflowId)
      .describe()
      .then(async (description) => {
        for (const activity of description.raw.pendingActivities ?? []) {
          if ((activity.attempt ?? 1) < STUCK_ATTEMPTS || stuck) continue;
          stuck = `${activity.activityType?.name} at attempt ${activity.attempt} (${activity.lastFailure?.message})`;
          say(`stopping ${handle.workflowId}: ${stuck}`);
          await client.workflow.getHandle(handle.workflowId).terminate(`bench: ${stuck}`);
        }
      })
      .catch(() => {});
  }, 5_000);
  try {
    return (await handle.result()) as T;
  } catch (error) {
    throw stuck ? new Error(`${handle.workflowId} did not finish: ${stuck}`) : error;
  } finally {
    clearInterval(watch);
  }
}

/** Runs the reconciliation workflow to its end; its report, wall time and per-activity spans. */
async function reconcile(input: ReconcileLinksInput) {
  const workflowId = uniqueId('reconcile:bench');
  const t = performance.now();
  const handle = await client.workflow.start('reconcileLinksWorkflow', {
    taskQueue: h.taskQueue,
    workflowId,
    args: [input],
  });
  const report = await result<ReconcileReport>(handle);
  const ms = performance.now() - t;
  return { report, ms, spans: await activitySpans(workflowId, handle.firstExecutionRunId) };
}

async function rescan(reason: string) {
  const workflowId = uniqueId('rescan:bench');
  const t = performance.now();
  const handle = await client.workflow.start('rescanLinksWorkflow', {
    taskQueue: h.taskQueue,
    workflowId,
    args: [{ reason }],
  });
  const report = await result<RescanReport>(handle);
  const ms = performance.now() - t;
  return { report, ms, spans: await activitySpans(workflowId, handle.firstExecutionRunId) };
}

/**
 * A re-scan pass stopped after `minutes` (--rescan-minutes): the links it verified are those whose
 * safety_checked_at it set (every complete check sets it, changed or not), its changes the audit entries of its
 * reason; the pass is cancelled, and its changes' syncs are waited for.
 */
async function rescanFor(minutes: number) {
  const workflowId = uniqueId('rescan:bench');
  const startedAt = new Date();
  const t = performance.now();
  const handle = await client.workflow.start('rescanLinksWorkflow', {
    taskQueue: h.taskQueue,
    workflowId,
    args: [{ reason: 'bench: re-scan' }],
  });
  const finished = await Promise.race([
    result<RescanReport>(handle).then(() => true),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), minutes * 60_000)),
  ]);
  const ms = performance.now() - t;
  if (!finished) {
    await handle.cancel();
    await handle.result().catch(() => {});
  }
  const scanned = await countOne(
    sql`SELECT count(*)::int AS n FROM links WHERE safety_checked_at >= ${startedAt}`,
  );
  const changedTo: Record<string, number> = {};
  for (const row of await sql<{ safety: string; n: number }[]>`
    SELECT after->>'safety' AS safety, count(*)::int AS n FROM audit_log
    WHERE action = 'link.safety_changed' AND reason = ${`re-scan ${workflowId}`} AND created_at >= ${startedAt}
    GROUP BY 1`)
    changedTo[row.safety] = row.n;
  say(`re-scan stopped after ${minutes} min: ${n(scanned)} links verified, ${driftText(changedTo)} changed`);
  await waitForSyncs();
  say(`its changes synced ${((performance.now() - t - ms) / 1000).toFixed(1)} s after it stopped`);
  const report = { work: { scanned }, changedTo, unverified: 0 } as unknown as RescanReport;
  return { report, ms, spans: await activitySpans(workflowId, handle.firstExecutionRunId) };
}

const seconds = (span: Span | undefined) => (span ? (span.last - span.first) / 1000 : 0);
const driftText = (drift: Partial<Record<string, number>> | undefined, except: string[] = []) => {
  const entries = Object.entries(drift ?? {}).filter(([k, v]) => !except.includes(k) && (v ?? 0) > 0);
  return entries.length === 0 ? '0' : entries.map(([k, v]) => `${n(v ?? 0)} ${k}`).join(', ');
};

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 24 * 3600_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function countOne(query: Promise<{ n: number }[]>): Promise<number> {
  const [row] = await query;
  return row?.n ?? 0;
}

/** Until no sync-queue row is due and no per-link sync workflow runs (what the setup steps set off). */
async function waitForSyncs() {
  let quiet = 0;
  await waitFor('the syncs to finish', async () => {
    const due = await countOne(
      sql`SELECT count(*)::int AS n FROM link_sync_queue WHERE next_attempt_at <= now()`,
    );
    const { count } = await client.workflow.count(
      `WorkflowType = 'syncLinkWorkflow' AND TaskQueue = '${h.taskQueue}' AND ExecutionStatus = 'Running'`,
    );
    // Visibility lags a little behind: twice in a row.
    quiet = due === 0 && count === 0 ? quiet + 1 : 0;
    return quiet >= 2;
  });
}

const explains: string[] = [];
let sampler: ResourceSampler | null = null;
/** A leg's (or a setup step's) window, for the table of where its time went. */
const windows: { leg: string; items: number; first: number; last: number }[] = [];

/**
 * Each leg's wall time split by where it went (the resource sampler between its first activity's schedule and its
 * last's completion): CPU seconds of each process, how busy the worker's and the fakes' event loops were,
 * Postgres's blocks read from outside shared buffers (and the time that took, with track_io_timing on) against
 * those found there, buffers its backends had to write out themselves, WAL; then microseconds an item, the figure
 * to compare between sizes.
 */
function printWhereTheTimeWent() {
  const table = [
    [
      'leg',
      'wall s',
      'CPU s: worker / temporal / postgres (kernel) / fakes / redis',
      'machine s: user / kernel / idle / iowait',
      'busy s: worker / fakes',
      'blocks read / hit',
      'read s',
      'backend writes',
      'WAL MB',
      'disk MB read',
      'reclaim scans',
      'µs an item: wall / worker / postgres / fakes / temporal',
    ],
  ];
  for (const w of windows) {
    const d = sampler?.between(w.first, w.last);
    if (!d) continue;
    const cpu = (k: string) => d.cpu[k] ?? 0;
    const c = (k: string) => d.counters[k] ?? 0;
    const per = (x: number) => ((x * 1e6) / w.items).toFixed(1);
    table.push([
      w.leg,
      ((w.last - w.first) / 1000).toFixed(1),
      [
        cpu('worker'),
        cpu('temporal'),
        `${cpu('postgres').toFixed(1)} (${(d.system.postgres ?? 0).toFixed(1)})`,
        cpu('fakes'),
        cpu('redis'),
      ]
        .map((x) => (typeof x === 'number' ? x.toFixed(1) : x))
        .join(' / '),
      ['machineUser', 'machineSystem', 'machineIdle', 'machineIowait']
        .map((k) => c(k).toFixed(0))
        .join(' / '),
      `${(c('workerBusyMs') / 1000).toFixed(1)} / ${(c('fakesBusyMs') / 1000).toFixed(1)}`,
      `${n(c('blks_read'))} / ${n(c('blks_hit'))}`,
      (c('blk_read_time') / 1000).toFixed(1),
      n(c('buffers_backend')),
      (c('wal_bytes') / 2 ** 20).toFixed(0),
      (c('diskReadKib') / 1024).toFixed(0),
      n(c('reclaimScanDirect') + c('reclaimScanKswapd')),
      [(w.last - w.first) / 1000, cpu('worker'), cpu('postgres'), cpu('fakes'), cpu('temporal')]
        .map(per)
        .join(' / '),
    ]);
  }
  if (table.length === 1) return;
  console.log(
    `\nWhere each leg's time went (sampled every 0.5 s; track_io_timing ${trackIoTiming ? 'on' : 'off: no read time'}):`,
  );
  const widths = table[0]!.map((_, i) => Math.max(...table.map((line) => line[i]!.length)));
  for (const [i, line] of table.entries()) {
    console.log(
      line.map((cell, j) => (j === 0 ? cell.padEnd(widths[j]!) : cell.padStart(widths[j]!))).join('  '),
    );
    if (i === 0) console.log(widths.map((x) => '-'.repeat(x)).join('  '));
  }
}

let cleaning: Promise<void> | null = null;
/** Deletes the bench's serving-store keys, stops the worker and the fakes' process, drops the copy. Once. */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    await sampler?.stop();
    if (redis?.isOpen) {
      const deleted = await deleteKeysByPrefix(redis, PREFIX);
      say(`deleted ${n(deleted)} serving-store keys`);
      await redis.close();
    }
    await h.close();
    await fakes.stop();
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: cleaning up (the copy, the serving-store keys)`);
    cleanUp().finally(() => process.exit(130));
  });
}

/**
 * Runs `statements` (product store functions) once on a connection of its own that records what they send,
 * then `EXPLAIN (ANALYZE, BUFFERS)` of each statement recorded, with the same parameters.
 */
async function explain(label: string, statements: (db: Sql) => Promise<unknown>) {
  const sent: { query: string; parameters: unknown[]; types: number[] }[] = [];
  let recording = true;
  const db = postgres(h.db.url, {
    max: 1,
    onnotice: () => {},
    types: {
      bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (s: string) => Number(s) },
    },
    debug: (_connection, query, parameters, types) => {
      if (recording) sent.push({ query, parameters: [...parameters], types: [...(types as number[])] });
    },
  });
  try {
    // A parameter array made before the connection knows the array types is sent as text: connect first.
    await db`SELECT 1`;
    sent.length = 0;
    const t = performance.now();
    await statements(db as unknown as Sql);
    const firstMs = performance.now() - t;
    recording = false;
    explains.push(`--- ${label} (the statement run once first: ${firstMs.toFixed(1)} ms)`);
    for (const { query, parameters, types } of sent) {
      // With the types they were sent with (arrays, timestamps).
      const typed = parameters.map((value, i) =>
        Array.isArray(value)
          ? db.array(value, types[i])
          : types[i]
            ? db.typed(value as never, types[i])
            : value,
      );
      const plan = await db.unsafe(`EXPLAIN (ANALYZE, BUFFERS) ${query}`, typed as never[]);
      explains.push(query.replace(/\s+/g, ' ').trim().slice(0, 400));
      for (const line of plan) explains.push(`  ${String(line['QUERY PLAN'])}`);
    }
  } finally {
    await db.end();
  }
}

try {
  const [counts] = await sql<
    { links: number; live: number; bitly: number; wordpress: number; sites: number; expiries: number }[]
  >`
    SELECT (SELECT count(*)::int FROM links) AS links,
           (SELECT count(*)::int FROM links WHERE status IN ('active', 'pending') AND deleted_at IS NULL) AS live,
           (SELECT count(*)::int FROM vendor_links WHERE vendor = 'bitly') AS bitly,
           (SELECT count(*)::int FROM links WHERE site IS NOT NULL AND post_id IS NOT NULL) AS wordpress,
           (SELECT count(*)::int FROM wordpress_sites) AS sites,
           (SELECT count(*)::int FROM links WHERE status = 'active' AND deleted_at IS NULL
              AND expires_at <= now()) AS expiries`;
  const c = counts!;
  say(
    `the copy: ${n(c.links)} links (${n(c.live)} live), ${n(c.bitly)} Bitly copies, ${n(c.wordpress)} WordPress-bound links on ${c.sites} sites, ${n(c.expiries)} active past their expiry`,
  );
  const before = await fakesStats();

  // ---- Bitly: what each vendor_links row says it holds. -------------------------------------------------
  const settings = { ...h.config.redirect, shortBaseUrl: h.config.shortBaseUrl };
  const bitlyCounts = { seeded: 0, failed: 0, collision: 0, otherId: 0, otherState: 0 };
  if (fakes.ready.bitlyEnv) {
    const t = performance.now();
    const now = Date.now();
    const cursor = sql<(LinkRow & { vendorState: string; vendorId: string; madeAt: Date })[]>`
      SELECT ${sql.unsafe(QUALIFIED_LINK_COLUMNS)}, v.state AS "vendorState", v.vendor_id AS "vendorId",
             coalesce(v.synced_at, l.created_at) AS "madeAt"
      FROM vendor_links AS v JOIN links AS l ON l.code = v.code
      WHERE v.vendor = 'bitly' ORDER BY l.created_at, l.code`.cursor(5_000);
    // A request a batch, each awaited: what is on its way to the fakes' process stays one batch.
    for await (const batch of cursor) {
      const links: BitlinkSeed[] = [];
      for (const row of batch) {
        if (row.vendorState === 'failed') bitlyCounts.failed++;
        else if (row.vendorState === 'collision') bitlyCounts.collision++;
        else if (row.vendorState !== 'synced') bitlyCounts.otherState++;
        else if (!row.vendorId.startsWith(`${BITLY_DOMAIN}/`)) bitlyCounts.otherId++;
        else {
          const target = toVendorTarget(row, settings, now);
          links.push({
            hash: row.vendorId.slice(BITLY_DOMAIN.length + 1),
            longUrl: target.longUrl,
            archived: target.archived,
            tags: [BITLY_OWN_TAG],
            ...(row.title ? { title: row.title.slice(0, 500) } : {}),
            createdAt: row.madeAt,
          });
          bitlyCounts.seeded++;
        }
      }
      if (links.length > 0) await fakes.ask('bitly-seed', { links });
    }
    const s = (performance.now() - t) / 1000;
    rows.push({
      leg: 'bitly seed',
      items: bitlyCounts.seeded,
      what: 'bitlinks',
      seconds: s,
      drift: '',
      setup: true,
    });
    say(
      `Bitly holds ${n(bitlyCounts.seeded)} bitlinks (${n(bitlyCounts.failed)} failed and ${n(bitlyCounts.collision)} in collision left out; ${bitlyCounts.otherId + bitlyCounts.otherState} other) in ${s.toFixed(1)} s`,
    );
  }
  const afterBitly = await fakesStats();

  const worker = await h.startWorker();
  // Where each leg's time went: every process's CPU by role, Postgres's block and WAL counters, both event loops.
  sampler = startResourceSampler({
    groups: () => ({
      worker: [process.pid],
      temporal: descendantsOf(process.pid).filter((pid) => commandOf(pid) === 'temporal'),
      postgres: pidsNamed('postgres'),
      fakes: [fakes.pid],
      redis: pidsNamed('redis-server'),
    }),
    counters: async () => ({
      ...(await postgresCounters(sql)),
      ...machineCounters(),
      workerBusyMs: eventLoopBusyMs(),
      fakesBusyMs: await fakes.ask('busy', {}),
    }),
  });

  // ---- The expiry sweeper, started as the worker's start does; then its syncs. ---------------------------
  {
    const t = performance.now();
    const due = (await getExpiryBacklog(sql)).due;
    await wakeExpirySweeper({ sql, sweeper: createExpirySweeper(client.workflow, h.taskQueue) });
    await waitFor('the sweeper', async () => (await getExpiryBacklog(sql)).due === 0);
    await waitForSyncs();
    const s = (performance.now() - t) / 1000;
    rows.push({ leg: 'sweep', items: due, what: 'links expired', seconds: s, drift: '', setup: true });
    say(`the expiry sweeper expired ${n(due)} links and their syncs finished in ${s.toFixed(1)} s`);
  }

  // ---- WordPress: a signed listing per site, from the copy's WordPress-bound links. ---------------------
  let posts = 0;
  const beforeListings = await fakesStats();
  if (legs.has('wordpress')) {
    const t = performance.now();
    const sites = await sql<{ site: string }[]>`SELECT site FROM wordpress_sites ORDER BY site`;
    for (const { site } of sites) {
      const restUrl = await fakes.ask('listing-start', { site, secret: SECRET });
      listingSites.push(site);
      await sql`UPDATE wordpress_sites SET rest_url = ${restUrl} WHERE site = ${site}`;
    }
    const statuses: Record<string, number> = {};
    const modifiedAt = `${new Date().toISOString().slice(0, 19)}Z`;
    const cursor = sql<
      {
        site: string;
        postId: number;
        code: string;
        status: string;
        deleted: boolean;
        targetUrl: string;
        title: string | null;
      }[]
    >`
      SELECT site, post_id AS "postId", code, status, deleted_at IS NOT NULL AS deleted, target_url AS "targetUrl", title
      FROM links WHERE site IS NOT NULL AND post_id IS NOT NULL ORDER BY site, post_id`.cursor(5_000);
    // A request a batch, each awaited (as the bitlinks), the batch's posts by site.
    for await (const batch of cursor) {
      const bySite = new Map<string, FakePost[]>();
      for (const link of batch) {
        if (!listingSites.includes(link.site)) continue;
        const status: FakePost['status'] = link.deleted
          ? 'trash'
          : link.status === 'active' || link.status === 'blocked' || link.status === 'pending'
            ? 'publish'
            : 'draft';
        statuses[status] = (statuses[status] ?? 0) + 1;
        const sitePosts = bySite.get(link.site) ?? [];
        bySite.set(link.site, sitePosts);
        sitePosts.push({
          postId: link.postId,
          status,
          permalink: link.targetUrl,
          ...(link.title ? { title: link.title } : {}),
          modifiedAt,
          knownCode: link.code,
        });
        posts++;
      }
      if (bySite.size > 0)
        await fakes.ask('listing-posts', {
          sites: [...bySite].map(([site, sitePosts]) => ({ site, posts: sitePosts })),
        });
    }
    const s = (performance.now() - t) / 1000;
    rows.push({ leg: 'listing build', items: posts, what: 'posts', seconds: s, drift: '', setup: true });
    say(
      `${listingSites.length} WordPress listings hold ${n(posts)} posts (${Object.entries(statuses)
        .map(([k, v]) => `${n(v)} ${k}`)
        .join(', ')}) in ${s.toFixed(1)} s`,
    );
  } else {
    await sql`DELETE FROM wordpress_sites`;
  }
  const afterListings = await fakesStats();
  const bitlyMb = afterBitly.heapMb - before.heapMb;
  const listingMb = afterListings.heapMb - beforeListings.heapMb;
  if (bitlyCounts.seeded > 0 || posts > 0)
    say(
      `fakes' heap: Bitly ${bitlyMb.toFixed(0)} MB (${bitlyCounts.seeded ? ((bitlyMb * 2 ** 20) / bitlyCounts.seeded).toFixed(0) : '-'} bytes a bitlink), listings ${listingMb.toFixed(0)} MB (${posts ? ((listingMb * 2 ** 20) / posts).toFixed(0) : '-'} bytes a post); the fakes' process: heap ${afterListings.heapMb.toFixed(0)} MB, RSS ${afterListings.rssMb.toFixed(0)} MB; this process (the worker's): heap ${heapMb().toFixed(0)} MB`,
    );

  // ---- The serving store, filled by a repairing reconciliation from its serving phase. ------------------
  const redisMemory = async () =>
    Number(/used_memory:(\d+)/.exec((await redis?.info('memory')) ?? '')?.[1] ?? 0);
  if (legs.has('serving')) {
    const memoryBefore = await redisMemory();
    const fill = await reconcile({
      repair: true,
      reason: 'bench: fill the serving store',
      position: { phase: 'serving', cursor: '' },
    });
    const span = fill.spans.get('reconcileServingStore');
    const serving = fill.report.serving;
    if (span) windows.push({ leg: '(serving fill)', items: span.read, first: span.first, last: span.last });
    rows.push({
      leg: 'serving fill',
      items: span?.read ?? 0,
      what: 'links',
      seconds: seconds(span),
      drift: `${driftText(serving?.drift)} (repaired ${driftText(serving?.repaired)})`,
      setup: true,
    });
    say(
      `serving store filled: ${n(span?.read ?? 0)} links in ${seconds(span).toFixed(1)} s (${driftText(serving?.drift)}, repaired ${driftText(serving?.repaired)}); the run's WordPress leg (repair) found ${driftText(fill.report.wordpress?.drift)} in ${seconds(fill.spans.get('reconcileWordPressPosts')).toFixed(1)} s; whole run ${(fill.ms / 1000).toFixed(1)} s`,
    );
    const grown = (await redisMemory()) - memoryBefore;
    say(
      `Redis grew by ${(grown / 2 ** 20).toFixed(0)} MB (${span?.read ? (grown / span.read).toFixed(0) : '-'} bytes a record)`,
    );
    await waitForSyncs();
  }

  // ---- The check. ---------------------------------------------------------------------------------------
  const [scope] = await sql<{ missingScope: number }[]>`
    SELECT count(*)::int AS "missingScope" FROM links
    WHERE status = 'active' AND deleted_at IS NULL AND domain = '' AND created_at < now()`;
  const loadBeforeCheck = loadAverage();
  say(`the check run starts (load average ${loadBeforeCheck})`);
  const check = await reconcile({ repair: false, reason: 'bench: check' });
  const r = check.report;
  say(`the check run took ${(check.ms / 1000).toFixed(1)} s (load average ${loadAverage()})`);
  const legRow = (leg: string, activity: string, items: number, what: string, drift: string) => {
    const span = check.spans.get(activity);
    rows.push({ leg, items, what, seconds: seconds(span), drift });
    if (span && items > 0) windows.push({ leg, items, first: span.first, last: span.last });
    if (span && span.attempts > span.calls)
      say(`note: ${leg} needed ${span.attempts - span.calls} retried attempts`);
  };
  legRow(
    'bitly',
    'reconcileBitlyPages',
    check.spans.get('reconcileBitlyPages')?.read ?? 0,
    'bitlinks',
    legs.has('bitly') ? driftText(r.bitly?.drift, ['missing']) : 'off',
  );
  legRow(
    'missing',
    'reconcileMissingOnBitly',
    legs.has('bitly') ? (scope?.missingScope ?? 0) : 0,
    'active links',
    legs.has('bitly') ? `${n(r.bitly?.drift.missing ?? 0)} missing` : 'off',
  );
  legRow(
    'serving',
    'reconcileServingStore',
    check.spans.get('reconcileServingStore')?.read ?? 0,
    'links',
    legs.has('serving') ? driftText(r.serving?.drift) : 'off',
  );
  legRow(
    'expiry',
    'reconcileExpiryTimers',
    check.spans.get('reconcileExpiryTimers')?.read ?? 0,
    'overdue',
    driftText(r.expiry.drift),
  );
  legRow(
    'wordpress',
    'reconcileWordPressPosts',
    check.spans.get('reconcileWordPressPosts')?.read ?? 0,
    'posts',
    legs.has('wordpress') ? driftText(r.wordpress?.drift) : 'off',
  );
  rows.push({
    leg: 'check run',
    items: r.read,
    what: 'read',
    seconds: check.ms / 1000,
    drift: `report durationMs ${n(r.durationMs)}`,
  });

  // ---- The per-chunk statements at the middle of the table. ---------------------------------------------
  const [middle] = await sql<{ code: string }[]>`
    SELECT code FROM links ORDER BY code OFFSET (SELECT count(*) / 2 FROM links) LIMIT 1`;
  const mid = middle?.code ?? '';
  if (legs.has('bitly')) {
    const page = await sql<{ code: string }[]>`
      SELECT v.code FROM vendor_links AS v JOIN links AS l ON l.code = v.code
      WHERE v.vendor = 'bitly' AND v.state = 'synced'
      ORDER BY l.created_at, l.code OFFSET (SELECT count(*) / 2 FROM vendor_links) LIMIT 100`;
    const codes = page.map((p) => p.code);
    await explain('bitly: one page of 100 bitlinks, their links (getVendorTargetRowsByCodes)', (db) =>
      getVendorTargetRowsByCodes(db, codes),
    );
    await explain('bitly: one page of 100 bitlinks, their vendor rows (listVendorLinks)', (db) =>
      listVendorLinks(db, codes),
    );
    // The pass over what Bitly lacks joins the run's marks: those of a Bitly pass that saw every bitlink.
    const runId = uniqueId('bench-explain');
    await sql`
      INSERT INTO reconcile_marks (run_id, side, code, drift)
      SELECT ${runId}, 'bitly', code, NULL FROM vendor_links WHERE vendor = 'bitly' AND state = 'synced'`;
    await sql`ANALYZE reconcile_marks`;
    const through = await findCodeWindowEnd(sql, mid, UNSEEN_WINDOW);
    await explain(
      `missing: a window's ${UNSEEN_WINDOW} links, those Bitly was not seen holding (listUnseenActiveCodes)`,
      (db) =>
        listUnseenActiveCodes(db, {
          runId,
          startedAt: new Date(),
          cursor: mid,
          through,
          domains: [''],
        }),
    );
    await sql`DELETE FROM reconcile_marks WHERE run_id = ${runId}`;
  }
  if (legs.has('serving')) {
    await explain('serving: the next 500 links by code (listLinksAfter)', (db) =>
      listLinksAfter(db, { cursor: mid, limit: 500, statuses: ['active', 'expired', 'gone', 'blocked'] }),
    );
  }
  await explain('expiry: the overdue links, once per run (listOverdueExpiries)', (db) =>
    listOverdueExpiries(db, { graceMs: OVERDUE_GRACE_MS, limit: 1000 }),
  );
  if (legs.has('wordpress') && listingSites.length > 0) {
    const site = listingSites[Math.min(1, listingSites.length - 1)]!;
    const ids = await sql<{ postId: number }[]>`
      SELECT post_id AS "postId" FROM links WHERE site = ${site} AND post_id IS NOT NULL ORDER BY post_id
      OFFSET (SELECT count(*) / 2 FROM links WHERE site = ${site}) LIMIT 500`;
    await explain(
      `wordpress: one listing page of 500 posts of ${site}, their links (listLinksByPostIds)`,
      (db) =>
        listLinksByPostIds(
          db,
          site,
          ids.map((i) => Number(i.postId)),
        ),
    );
    // Once per site after its last page: the site's live links no post of the listing named.
    const runId = uniqueId('bench-explain');
    await sql`
      INSERT INTO reconcile_marks (run_id, side, code, drift)
      SELECT ${runId}, 'wordpress', ${`${site}:`} || post_id::text, NULL FROM links WHERE site = ${site} AND post_id IS NOT NULL`;
    await sql`ANALYZE reconcile_marks`;
    // One stretch of the search, from the middle of the site's post IDs.
    const [{ links: siteLinks } = { links: 0 }] = await sql<{ links: number }[]>`
      SELECT count(*)::int AS links FROM links WHERE site = ${site} AND post_id > 0`;
    const afterPostId =
      (await findPostIdStretchEnd(sql, {
        site,
        afterPostId: 0,
        span: Math.max(1, Math.floor(siteLinks / 2)),
      })) ?? 0;
    await explain(
      `wordpress: ${site}'s links absent from its listing, a stretch of ${n(ABSENT_STRETCH)} of its ${n(siteLinks)} (findPostIdStretchEnd, listLinksAbsentFromListing)`,
      async (db) => {
        const throughPostId = await findPostIdStretchEnd(db, { site, afterPostId, span: ABSENT_STRETCH });
        return listLinksAbsentFromListing(db, {
          runId,
          site,
          startedAt: new Date(),
          afterPostId,
          throughPostId,
        });
      },
    );
    await sql`DELETE FROM reconcile_marks WHERE run_id = ${runId}`;
  }
  if (legs.has('rescan')) {
    const [clicked] = await sql<{ at: Date; code: string }[]>`
      SELECT last_clicked_at AS at, code FROM link_last_clicks ORDER BY last_clicked_at DESC, code
      OFFSET (SELECT count(*) / 2 FROM link_last_clicks) LIMIT 1`;
    if (clicked) {
      await explain('rescan: the next 500 links by last click (listLinksToRescan, recent)', (db) =>
        listLinksToRescan(db, {
          cursor: { phase: 'recent', lastClickedAt: clicked.at.toISOString(), code: clicked.code },
          startedAt: new Date(),
          limit: 500,
        }),
      );
    }
    await explain('rescan: the next 500 never-clicked links by code (listLinksToRescan, its tail)', (db) =>
      listLinksToRescan(db, {
        cursor: { phase: 'recent', lastClickedAt: null, code: mid },
        startedAt: new Date(),
        limit: 500,
      }),
    );
    await explain(
      'rescan: a window with nothing in scope (a blocklist re-scan, the sweep after a pass)',
      (db) =>
        listLinksToRescan(db, {
          cursor: { phase: 'sweep', lastClickedAt: null, code: mid },
          startedAt: new Date(),
          contains: 'no-such-host.invalid',
          limit: 500,
        }),
    );
  }

  // ---- The re-scan: Safe Browsing says what Postgres says, then a pass that changes nothing. -------------
  if (fakes.ready.safeBrowsing) {
    const t = performance.now();
    const flagged = sql<{ url: string; safety: string }[]>`
      SELECT target_url AS url, safety FROM links
      WHERE status IN ('active', 'pending') AND deleted_at IS NULL AND safety IN ('blocked', 'warn')`.cursor(
      5_000,
    );
    let threats = 0;
    for await (const batch of flagged) {
      const listed = batch.map(({ url, safety }) => ({
        url,
        threat: safety === 'blocked' ? 'MALWARE' : 'UNWANTED_SOFTWARE',
      }));
      if (listed.length > 0) threats += await fakes.ask('add-threats', { threats: listed });
    }
    say(`Safe Browsing lists ${n(threats)} URLs (${((performance.now() - t) / 1000).toFixed(1)} s)`);
    const unknown = await countOne(sql`
      SELECT count(*)::int AS n FROM links
      WHERE status IN ('active', 'pending') AND deleted_at IS NULL AND safety = 'unknown'`);
    if (unknown > 0 && settleBySql) {
      const t1 = performance.now();
      const settled = await sql`
        UPDATE links SET safety = 'clean', safety_checked_at = now() - interval '1 minute'
        WHERE status IN ('active', 'pending') AND deleted_at IS NULL AND safety = 'unknown'`;
      const s = (performance.now() - t1) / 1000;
      rows.push({
        leg: 'rescan settle (SQL)',
        items: settled.count,
        what: 'links',
        seconds: s,
        drift: `${n(settled.count)} unknown → clean`,
        setup: true,
      });
      say(
        `one statement marked ${n(settled.count)} of ${n(unknown)} unscanned links clean: ${s.toFixed(1)} s`,
      );
    } else if (unknown > 0 && settle) {
      const t1 = performance.now();
      const settle = await rescan('bench: settle the unscanned');
      await waitForSyncs();
      const s = (performance.now() - t1) / 1000;
      rows.push({
        leg: 'rescan settle',
        items: settle.report.work.scanned,
        what: 'links',
        seconds: s,
        drift: `${driftText(settle.report.changedTo)} changed`,
        setup: true,
      });
      say(
        `the first pass changed ${driftText(settle.report.changedTo)} of ${n(unknown)} unscanned; with their syncs ${s.toFixed(1)} s (the pass ${(settle.ms / 1000).toFixed(1)} s)`,
      );
    }
    say(`the timed re-scan starts (load average ${loadAverage()})`);
    const pass = rescanMinutes === null ? await rescan('bench: re-scan') : await rescanFor(rescanMinutes);
    const span = pass.spans.get('rescanLinks');
    if (span)
      windows.push({ leg: 'rescan', items: pass.report.work.scanned, first: span.first, last: span.last });
    rows.push({
      leg: 'rescan',
      items: pass.report.work.scanned,
      what: 'links',
      seconds: pass.ms / 1000,
      drift: `${driftText(pass.report.changedTo)} changed, ${n(pass.report.unverified)} unverified`,
    });
    say(
      `the re-scan took ${(pass.ms / 1000).toFixed(1)} s (its ${span?.calls ?? 0} activity calls ${seconds(span).toFixed(1)} s), ${n((await fakesStats()).safeBrowsingCalls)} Safe Browsing calls so far`,
    );
  }
  await worker.stop();
  await sampler?.stop();

  // ---- The figures. -------------------------------------------------------------------------------------
  const loadAtEnd = loadAverage();
  console.log(`\n${template}: ${n(c.links)} links; ${h.db.name}; legs ${[...legs].join(',')}`);
  console.log(
    `Bitly drift by kind (missing included): ${driftText(r.bitly?.drift)}; serving ${driftText(r.serving?.drift)}; expiry ${driftText(r.expiry.drift)}; WordPress ${driftText(r.wordpress?.drift)}`,
  );
  const table = [
    ['leg', 'items', 'seconds', 'items/s', 'drift'],
    ...rows.map((row) => [
      row.setup ? `(${row.leg})` : row.leg,
      `${n(row.items)} ${row.what}`,
      row.seconds.toFixed(1),
      row.seconds > 0 ? n(Math.round(row.items / row.seconds)) : '-',
      row.drift,
    ]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((line) => line[i]!.length)));
  for (const [i, line] of table.entries()) {
    console.log(
      line
        .map((cell, j) => (j === 0 || j === 4 ? cell.padEnd(widths[j]!) : cell.padStart(widths[j]!)))
        .join('  '),
    );
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  console.log('(in parentheses: setup, not a leg of the check run)');
  console.log(`load average: ${loadAtStart} at start, ${loadAtEnd} at end; total ${clock().trim()}`);
  printWhereTheTimeWent();
  console.log(`\nEXPLAIN (ANALYZE, BUFFERS) at the middle of the table (from code ${mid}):`);
  for (const line of explains) console.log(line);
} finally {
  await cleanUp();
}
