// An expiry burst: N links whose expiry falls in the same minute, made through the batch API (the sync queue's
// drainer writes them to the serving store and tells the one expiry sweeper, `expiry-sweep:{taskQueue}`, their
// earliest date, as for any new link with an expiry; ADR 0091), against real Postgres, Redis (the serving store)
// and a Temporal dev server with the real worker entry in its own process. From the
// due minute it measures, per link, when Postgres holds it `expired` (its row's updated_at, written by the
// expiry's own transaction) and when the serving store's record says `expired` (read back every second), then:
// the lateness of each expiry after its own expires_at (the later of the two), p50 / p99 / max, the total from
// the start of the due minute until the last link is expired in both, and the worker's RSS.
//
//   npx tsx bench/expiry_burst.ts [links=100000] [--spread=60] [--lead=SECONDS] [--worker-heap=MiB]
//
// --spread: the expiries are spread evenly over this many seconds from the start of the due minute (0: every
//   link at the same instant). --lead: seconds from the start until the due minute (default: enough for the
//   batch API and the sync queue at the rate measured on the shared two-core machine); the run stops if the links
//   are not all made and synced, with the sweeper running and told the first date, 10 s before it. --worker-heap: the worker's --max-old-space-size (the SDK sizes its cache of
//   running workflows from the heap limit, so this bounds the worker's memory).
//
// Baselines in the same run, after the burst, the simplest thing that does the same writes: one
// `UPDATE … SET status = 'expired' WHERE expires_at <= now()` of a copy of the links table (with its indexes), and
// one pipelined SET per link of its expired serving record to Redis.
import { performance } from 'node:perf_hooks';
import { createClient } from '@redis/client';
import { createHarness, eventually } from '../devkit/harness/harness.ts';
import { deleteKeysByPrefix } from '../devkit/harness/redis_keys.ts';
import { uniqueId } from '../devkit/harness/temporal.ts';
import { startWorkerProcess } from '../devkit/harness/worker_process.ts';
import { toServingRecord } from '../lib/redirect/serving_record.ts';
import { decodeServingRecord, encodeServingRecord } from '../lib/redirect/serving_store.ts';
import type { LinkRow } from '../lib/stores/link_rows.ts';
import { LINK_COLUMNS } from '../lib/stores/link_store.ts';
import {
  type ExpirySweepStep,
  expirySweepQuery,
  getExpirySweepWorkflowId,
  WORKFLOW_TYPES,
} from '../workflows/contract.ts';
import { commandOf, descendantsOf, pidsNamed, rssOf } from './process_stats.ts';
import { formatLoad } from './redirect/bench_report.ts';
import { type ResourceSampler, startResourceSampler } from './resource_sampler.ts';

function argValue(name: string): string | undefined {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg?.slice(name.length + 3);
}

const LINKS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 100_000);
const SPREAD_S = Number(argValue('spread') ?? 60);
// Made and armed (per-link timers, before ADR 0091) at ≈ 190 links a second on the shared two-core machine: twice
// that time, at least two minutes. Without timers the links are ready sooner; the lead is kept comparable.
const LEAD_S = Number(argValue('lead') ?? Math.max(120, Math.ceil(LINKS / 100)));
// The worker's V8 heap limit (MiB); its workflow cache is sized from it. Unset: Node's default for the machine.
const WORKER_HEAP_MB = argValue('worker-heap');
const BATCH = 1_000;
const POLL_MS = 500;
const PREFIX = `${uniqueId('lifeline-expiry')}:`;

const say = (msg: string) =>
  process.stderr.write(`[expiry ${new Date().toISOString().slice(11, 19)}] ${msg} (load ${formatLoad()})\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => Math.round(bytes / 1048576);
function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
/**
 * Samples, every second, the CPU used by each part: the worker (its process tree), the Temporal dev server,
 * Postgres (every backend on the machine: others' are idle under the quiet lock), Redis, and this process (the
 * bench's polling, and the web tier's in-process half: the batch API, the invalidations it receives). Each process
 * counts what it used between two samples, so one that exits mid-burst takes away at most its last second, never
 * what it used before (bench/resource_sampler.ts).
 */
function sampleCpu(workerPid: () => number | undefined): ResourceSampler {
  return startResourceSampler({
    intervalMs: 1000,
    groups: () => {
      const pid = workerPid();
      return {
        worker: pid ? [pid, ...descendantsOf(pid)] : [],
        temporal: descendantsOf(process.pid).filter((p) => commandOf(p) === 'temporal'),
        postgres: pidsNamed('postgres'),
        redis: pidsNamed('redis-server'),
        bench: [process.pid],
      };
    },
  });
}
const cpuSpent = (sampler: ResourceSampler, from: number, to: number) =>
  Object.fromEntries(
    Object.entries(sampler.between(from, to)?.cpu ?? {}).map(([k, v]) => [k, Math.round(v)]),
  );
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const env: Record<string, string> = {
  REDIS_URL: 'redis://127.0.0.1:6379',
  REDIS_KEY_PREFIX: PREFIX,
  SAFETY_TRUSTED_HOSTS: 'news.example',
  // The bench makes its links as fast as the API takes them; the worker does expiries only (no link-rot checks
  // of 100,000 made-up destinations).
  RATE_LIMIT_CREATE_PER_MINUTE: '10000000',
  RATE_LIMIT_CREATE_PER_IP_PER_MINUTE: '10000000',
  DESTINATION_CHECK_EVERY: 'off',
  LOG_LEVEL: 'silent',
};
const h = await createHarness({ env });
const redis = createClient({ url: 'redis://127.0.0.1:6379' });
await redis.connect();
// The worker logs at info (as in production): its "worker running" line says it is ready.
const worker = startWorkerProcess({
  h,
  env: {
    ...env,
    LOG_LEVEL: 'info',
    ...(WORKER_HEAP_MB ? { NODE_OPTIONS: `--max-old-space-size=${WORKER_HEAP_MB}` } : {}),
  },
});
const workerPid = () => worker.process.pid;

/** Per-link timers of before the sweeper: none should run. */
async function runningTimers(): Promise<number> {
  const { count } = await h.temporal.client.workflow.count(
    `TaskQueue = "${h.taskQueue}" AND WorkflowType = "${WORKFLOW_TYPES.expireLink}" AND ExecutionStatus = "Running"`,
  );
  return count;
}
const sweeper = () => h.temporal.client.workflow.getHandle(getExpirySweepWorkflowId(h.taskQueue));
/** When the sweeper looks next (epoch ms; null while it sweeps, or when it does not run). */
async function sweeperWakeAt(): Promise<number | null> {
  try {
    if ((await sweeper().describe()).status.name !== 'RUNNING') return null;
    return (await sweeper().query(expirySweepQuery)).wakeAtMs;
  } catch {
    return null;
  }
}
/** Every sweep's result in the sweeper's history (every run of its chain). */
async function sweeps(): Promise<ExpirySweepStep[]> {
  const steps: ExpirySweepStep[] = [];
  const workflowId = getExpirySweepWorkflowId(h.taskQueue);
  for await (const execution of h.temporal.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    const history = await h.temporal.client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
    for (const event of history.events ?? []) {
      const data = event.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
      if (data) steps.push(JSON.parse(Buffer.from(data).toString('utf8')) as ExpirySweepStep);
    }
  }
  return steps;
}

try {
  await eventually(async () => (worker.ready ? true : undefined), {
    timeoutMs: 120_000,
    what: 'the worker process',
  });
  const idleRss = rssOf(workerPid());
  // The worker's peak RSS, sampled every second from here to the end.
  let peakRss = idleRss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssOf(workerPid()));
  }, 1_000);
  sampler.unref();
  const started = Date.now();
  const due = Math.ceil((started + LEAD_S * 1000) / 60_000) * 60_000;
  const expiresAt = (i: number) => due + Math.floor((i * SPREAD_S * 1000) / LINKS);
  say(
    `${LINKS.toLocaleString('en')} links due from ${new Date(due).toISOString()} over ${SPREAD_S} s; making them`,
  );

  // 1. The links, through the batch API: each batch's links queued for their sync (serving store, sweeper).
  const dueOf = new Map<string, number>();
  for (let from = 0; from < LINKS; from += BATCH) {
    const items = [];
    for (let i = from; i < Math.min(LINKS, from + BATCH); i++) {
      items.push({
        url: `https://news.example/offers/${i}/a-limited-offer-${i}`,
        expiresAt: new Date(expiresAt(i)).toISOString(),
      });
    }
    const res = await h.api('/api/v1/links/batch', { method: 'POST', json: { links: items } });
    const body = (await res.json()) as {
      results: { index: number; status: number; link?: { code: string } }[];
    };
    for (const r of body.results) {
      if (r.status !== 201 || !r.link) throw new Error(`item ${from + r.index}: ${JSON.stringify(r)}`);
      dueOf.set(r.link.code, expiresAt(from + r.index));
    }
  }
  const createdMs = Date.now() - started;
  say(`made in ${seconds(createdMs)}; waiting for the sync queue and the sweeper`);

  // 2. Ready before the due minute: the sync queue drained (every link in the serving store, the sweeper told
  // the batches' earliest dates) and the one sweeper running, asleep until the first due date at the latest.
  // Nothing per link is armed in Temporal.
  let queued = -1;
  let wakeAt: number | null = null;
  await eventually(
    async () => {
      const [q] = await h.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM link_sync_queue`;
      queued = q!.n;
      wakeAt = await sweeperWakeAt();
      return queued === 0 && wakeAt !== null && wakeAt <= due + 1_000 ? true : undefined;
    },
    {
      timeoutMs: Math.max(0, due - 10_000 - Date.now()),
      intervalMs: 2_000,
      what: () => `the links ready (${queued} still queued, sweeper wakes at ${wakeAt}; raise --lead)`,
    },
  );
  const armed = await runningTimers();
  if (armed !== 0) throw new Error(`${armed} per-link expire:{code} timers run; none should`);
  const sweepsBefore = (await sweeps()).length;
  const armedMs = Date.now() - started;
  const armedRss = rssOf(workerPid());
  say(
    `ready after ${seconds(armedMs)} (sweeper wakes at ${new Date(wakeAt!).toISOString()}); due in ${seconds(due - Date.now())}`,
  );

  // 3. The burst: poll Postgres for newly expired rows, then the serving store for those not yet served.
  await sleep(Math.max(0, due - 1_000 - Date.now()));
  const cpuSampler = sampleCpu(workerPid);
  const cpuFrom = Date.now();
  const pgAt = new Map<string, number>();
  const servedAt = new Map<string, number>();
  const timeline: { s: number; postgres: number; served: number; rssMb: number }[] = [];
  let since = due - 60_000;
  let lastTimeline = due;
  const waiting = new Set<string>();
  const deadline = due + 4 * 3600_000;
  while (servedAt.size < LINKS) {
    if (Date.now() > deadline)
      throw new Error(`after 4 hours ${servedAt.size} of ${LINKS} served as expired`);
    const round = Date.now();
    // updated_at is the expiring transaction's start: rows committed later than they started are caught by
    // reading back from a minute before the latest seen.
    const rows = await h.db.sql<{ code: string; at: number }[]>`
      SELECT code, (extract(epoch FROM updated_at) * 1000)::float8 AS at FROM links
      WHERE status = 'expired' AND updated_at >= to_timestamp(${since / 1000})`;
    for (const r of rows) {
      if (pgAt.has(r.code)) continue;
      pgAt.set(r.code, r.at);
      waiting.add(r.code);
      since = Math.max(since, r.at - 60_000);
    }
    const codes = [...waiting];
    for (let i = 0; i < codes.length; i += 5_000) {
      const chunk = codes.slice(i, i + 5_000);
      const values = await redis.mGet(chunk.map((c) => `${PREFIX}link:${c}`));
      const now = Date.now();
      values.forEach((raw, j) => {
        if (decodeServingRecord(chunk[j]!, raw)?.status === 'expired') {
          servedAt.set(chunk[j]!, now);
          waiting.delete(chunk[j]!);
        }
      });
    }
    if (Date.now() - lastTimeline >= 10_000) {
      lastTimeline = Date.now();
      timeline.push({
        s: Math.round((lastTimeline - due) / 1000),
        postgres: pgAt.size,
        served: servedAt.size,
        rssMb: mb(rssOf(workerPid())),
      });
      say(`+${timeline.at(-1)!.s} s: ${pgAt.size} expired in Postgres, ${servedAt.size} served expired`);
    }
    await sleep(Math.max(0, POLL_MS - (Date.now() - round)));
  }
  const endRss = rssOf(workerPid());
  const cpuTo = Date.now();
  await cpuSampler.stop();
  const cpu = cpuSpent(cpuSampler, cpuFrom, cpuTo);
  const burstEnded = Date.now();
  clearInterval(sampler);
  const lateness: number[] = [];
  const pgLateness: number[] = [];
  let lastDone = 0;
  for (const [code, at] of dueOf) {
    const done = Math.max(pgAt.get(code)!, servedAt.get(code)!);
    lastDone = Math.max(lastDone, done);
    lateness.push(done - at);
    pgLateness.push(pgAt.get(code)! - at);
  }
  const totalMs = lastDone - due;
  const [audited] = await h.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM audit_log WHERE actor = 'system:expire' AND action = 'link.status_changed'`;
  const burstSweeps = (await sweeps()).slice(sweepsBefore).filter((s) => s.expired > 0);
  say(
    `every link expired and served expired ${seconds(totalMs)} after the due minute began, ` +
      `in ${burstSweeps.length} sweeps`,
  );

  // 4. Baselines: the same writes, the simplest way.
  await h.db.sql`CREATE TABLE bench_links_copy (LIKE links INCLUDING ALL)`;
  await h.db.sql`INSERT INTO bench_links_copy SELECT * FROM links`;
  await h.db.sql`UPDATE bench_links_copy SET status = 'active'`;
  await h.db.sql`VACUUM ANALYZE bench_links_copy`;
  const b0 = performance.now();
  const baselineUpdate = await h.db.sql`
    UPDATE bench_links_copy SET status = 'expired', updated_at = now(), version = version + 1
    WHERE status = 'active' AND expires_at <= now()`;
  const baselinePostgresMs = performance.now() - b0;
  const expired = await h.db.sql<LinkRow[]>`SELECT ${h.db.sql.unsafe(LINK_COLUMNS)} FROM links`;
  const b1 = performance.now();
  for (let i = 0; i < expired.length; i += 5_000) {
    await Promise.all(
      expired
        .slice(i, i + 5_000)
        .map((r) => redis.set(`${PREFIX}baseline:${r.code}`, encodeServingRecord(toServingRecord(r)))),
    );
  }
  const baselineRedisMs = performance.now() - b1;

  const result = {
    links: LINKS,
    spreadS: SPREAD_S,
    due: new Date(due).toISOString(),
    setup: { createdMs, readyMs: armedMs, perLinkTimers: armed },
    burst: {
      totalMs: Math.round(totalMs),
      latenessMs: {
        p50: Math.round(percentile(lateness, 50)),
        p99: Math.round(percentile(lateness, 99)),
        max: Math.round(Math.max(...lateness)),
      },
      postgresLatenessMs: {
        p50: Math.round(percentile(pgLateness, 50)),
        p99: Math.round(percentile(pgLateness, 99)),
        max: Math.round(Math.max(...pgLateness)),
      },
      expiriesPerSecond: Math.round((LINKS * 1000) / Math.max(1, lastDone - due)),
      audited: audited!.n,
      sweeps: burstSweeps.length,
      largestSweep: Math.max(0, ...burstSweeps.map((s) => s.expired)),
      pollMs: POLL_MS,
    },
    cpuSecondsDuringBurst: { ...cpu, wall: Math.round((burstEnded - due) / 1000) },
    workerHeapMb: WORKER_HEAP_MB ?? 'default',
    workerRssMb: { idle: mb(idleRss), ready: mb(armedRss), peak: mb(peakRss), end: mb(endRss) },
    baselines: {
      postgresOneUpdateMs: Math.round(baselinePostgresMs),
      postgresRows: baselineUpdate.count,
      redisPipelinedSetsMs: Math.round(baselineRedisMs),
    },
    timeline,
    loadAverage: formatLoad(),
  };
  console.log(JSON.stringify(result, null, 2));
  const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  console.log(
    [
      '',
      row([
        'links',
        'ready after',
        'p50 lateness',
        'p99 lateness',
        'max',
        'due minute → all expired',
        'worker RSS (idle → ready → peak)',
        'baseline UPDATE + Redis',
      ]),
      row(['---', '---', '---', '---', '---', '---', '---', '---']),
      row([
        LINKS.toLocaleString('en'),
        seconds(armedMs),
        seconds(result.burst.latenessMs.p50),
        seconds(result.burst.latenessMs.p99),
        seconds(result.burst.latenessMs.max),
        seconds(totalMs),
        `${result.workerRssMb.idle} → ${result.workerRssMb.ready} → ${result.workerRssMb.peak} MiB`,
        `${Math.round(baselinePostgresMs)} ms + ${Math.round(baselineRedisMs)} ms`,
      ]),
    ].join('\n'),
  );
  if (audited!.n !== LINKS || baselineUpdate.count !== LINKS) process.exitCode = 1;
} finally {
  worker.process.kill('SIGTERM');
  await Promise.race([
    new Promise((r) => worker.process.once('exit', r)),
    new Promise((r) => setTimeout(r, 30_000)),
  ]);
  worker.process.kill('SIGKILL');
  await deleteKeysByPrefix(redis, PREFIX);
  await redis.close();
  await h.close();
}
