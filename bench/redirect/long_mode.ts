// `long` mode: ours alone on one path for BENCH_LONG_SECONDS (10 minutes), one continuous wrk run: throughput
// and RSS per sample (a minute), and exact click accounting — the human clicks Lifeline recorded must equal the
// redirects wrk completed.
//
// Accounting: every wrk run against the server (warm-up included) requests codes only inside a click window
// and then, for TAIL_SECONDS, GET /_bench_stop (an impossible code: 404 before any lookup, no click), so no code
// request is in flight when wrk stops. Redirects completed = wrk's requests − its responses above 399. The
// clicks are a direct SQL sum over click_counts (kind = 'human') after the server's SIGTERM shutdown, which
// flushes the click buffer; the readiness probe (no User-Agent) counts as a bot, not a human.
import { median, toMs, warmUp } from './alternate_rounds.ts';
import { clearBenchRedis, seedServingStore, sumClicksByKind } from './bench_data.ts';
import { describeMachine, formatLoad, toPercent } from './bench_report.ts';
import {
  CONNECTIONS,
  LONG_CODES,
  LONG_SAMPLE_SECONDS,
  LONG_SECONDS,
  REDIS_KEY_PREFIX,
  say,
} from './bench_settings.ts';
import {
  diffCounts,
  type OurCounters,
  type OurMemory,
  readOurCounters,
  readOurMemory,
} from './read_our_metrics.ts';
import type { PathSpec } from './redirect_paths.ts';
import { runWrk, type WrkOptions, type WrkResult } from './run_wrk.ts';
import { type RunContext, startContestant } from './start_contestant.ts';
import { fitTrend } from './trend.ts';

/** How long ours may take to stop (and flush its clicks) before it is killed. */
const SHUTDOWN_GRACE_MS = 60_000;

/** Seconds of stop requests after each click window (far above any answer's latency). */
const TAIL_SECONDS = 2;
/** The last sample's throughput must be at least this share of the first's. */
const MIN_LAST_TO_FIRST = 0.95;

/** One sample; its memory (OurMemory) read at the sample's end: heap growth told from the rest of RSS. */
export interface LongSample extends OurMemory {
  /** 1-based sample number ("minute"). */
  index: number;
  /** Seconds of the click window this sample covers. */
  seconds: number;
  /** Code requests wrk sent in the sample, per second. */
  rps: number;
}

export interface LongResult {
  spec: PathSpec;
  seconds: number;
  samples: LongSample[];
  lastToFirst: number;
  throughputPass: boolean;
  main: WrkResult;
  /** Redirects wrk completed: warm-up runs and the measured run. */
  warmupRedirects: number;
  measuredRedirects: number;
  /** Human clicks recorded in click_counts during this server's life (SQL, after its shutdown flush). */
  humanClicks: number;
  clicksByKind: Record<string, number>;
  counters: OurCounters;
  redirectsCounted: Record<string, number>;
  layers: Record<string, number>;
  shutdown: string;
  errors: number;
  clicksPass: boolean;
  loadBefore: string;
  loadAfter: string;
}

/** wrk `seconds` long with a click window of `seconds` from now, then TAIL_SECONDS of stop requests. */
async function runWrkWithClickWindow(
  url: string,
  seconds: number,
  options: Omit<WrkOptions, 'clickWindow'>,
): Promise<{ result: WrkResult; startedMs: number; window: { from: number; until: number } }> {
  const startedMs = Date.now();
  // Samples start on a whole second (os.time() in the Lua script has whole seconds); requests before it count
  // in the first sample, which is therefore up to a second longer.
  const from = Math.ceil(startedMs / 1000);
  const until = from + Math.ceil(seconds);
  const result = await runWrk(url, until - startedMs / 1000 + TAIL_SECONDS, {
    ...options,
    clickWindow: { from, until, sampleSeconds: LONG_SAMPLE_SECONDS },
  });
  if (result.stops_sent === 0)
    throw new Error(
      'wrk sent no stop request: the run ended inside its click window, so clicks cannot be counted',
    );
  return { result, startedMs, window: { from, until } };
}

export async function benchLong(pathSpec: PathSpec, ctx: RunContext): Promise<LongResult> {
  const spec = LONG_CODES === undefined ? pathSpec : { ...pathSpec, codes: LONG_CODES };
  const loadBefore = formatLoad();
  say(
    `— long ${spec.key}: ${LONG_SECONDS} s of ours alone, a sample every ${LONG_SAMPLE_SECONDS} s; load average ${loadBefore}`,
  );
  await clearBenchRedis();
  if (spec.key === 'serving_store') await seedServingStore(ctx.dbName, REDIS_KEY_PREFIX, spec.codes);
  const clicksBefore = await sumClicksByKind(ctx.dbName);
  const ours = (await startContestant('ours', spec, ctx))!;
  let shutdown = 'not stopped';
  let body: Omit<LongResult, 'humanClicks' | 'clicksByKind' | 'shutdown' | 'clicksPass' | 'loadAfter'>;
  try {
    const startCounters = await readOurCounters(ours);
    let warmupRedirects = 0;
    let warmupErrors = 0;
    // The same warm-up as the paths mode, each run with a click window so its redirects are counted too.
    await warmUp(ours, spec.codes, async (seconds, order) => {
      const { result } = await runWrkWithClickWindow(ours.url, seconds, { codes: spec.codes, order });
      warmupRedirects += result.redirects;
      // Stop requests are 404s by design; anything else above 399 would show as a click shortfall.
      warmupErrors += result.socketErrors;
      return result.redirects;
    });
    say(`long ${spec.key}: warm-up done (${warmupRedirects} redirects); measuring`);

    // One /metrics scrape a minute: a single request among millions, as a Prometheus server would send.
    const memoryAtSampleEnd: Promise<OurMemory>[] = [];
    const sampler = setInterval(
      () => memoryAtSampleEnd.push(readOurMemory(ours)),
      LONG_SAMPLE_SECONDS * 1000,
    );
    let main: Awaited<ReturnType<typeof runWrkWithClickWindow>>;
    try {
      main = await runWrkWithClickWindow(ours.url, LONG_SECONDS, { codes: spec.codes, order: 'random' });
    } finally {
      clearInterval(sampler);
    }
    const memory = await Promise.all(memoryAtSampleEnd);
    const endCounters = await readOurCounters(ours);
    const { result, startedMs, window } = main;
    const samples: LongSample[] = [];
    for (const [i, sent] of result.sent_per_sample.entries()) {
      const start = i === 0 ? startedMs / 1000 : window.from + i * LONG_SAMPLE_SECONDS;
      const end = Math.min(window.from + (i + 1) * LONG_SAMPLE_SECONDS, window.until);
      samples.push({
        index: i + 1,
        seconds: Math.round((end - start) * 10) / 10,
        rps: sent / (end - start),
        ...(memory[i] ?? (await readOurMemory(ours))),
      });
    }
    const first = samples[0]!;
    const last = samples.at(-1)!;
    const lastToFirst = last.rps / first.rps;
    for (const s of samples)
      say(
        `long ${spec.key} sample ${s.index}: ${Math.round(s.rps)} req/s over ${s.seconds} s, RSS ${s.rss} MiB, ` +
          `V8 heap ${s.heapUsed} MiB used of ${s.heapTotal} MiB`,
      );
    body = {
      spec,
      seconds: LONG_SECONDS,
      samples,
      lastToFirst,
      throughputPass: lastToFirst >= MIN_LAST_TO_FIRST,
      main: result,
      warmupRedirects,
      measuredRedirects: result.redirects,
      counters: endCounters,
      redirectsCounted: diffCounts(endCounters.redirects, startCounters.redirects),
      layers: diffCounts(endCounters.lookups, startCounters.lookups),
      errors: warmupErrors + result.socketErrors,
      loadBefore,
    };
  } finally {
    // SIGTERM: the server stops accepting, then its shutdown flushes the click buffer to click_counts. A minute's
    // grace, as an orchestrator would give (Kubernetes: 30 s by default): on the Postgres path a flush of
    // ~100,000 distinct codes over the buffer's one connection took longer than the 10 s other servers get.
    const stopping = performance.now();
    shutdown = await ours.stop(SHUTDOWN_GRACE_MS);
    shutdown += ` after ${((performance.now() - stopping) / 1000).toFixed(1)} s`;
  }
  const clicksAfter = await sumClicksByKind(ctx.dbName);
  const clicksByKind = diffCounts(clicksAfter, clicksBefore);
  const humanClicks = clicksByKind.human ?? 0;
  const wrkRedirects = body.warmupRedirects + body.measuredRedirects;
  const loadAfter = formatLoad();
  say(
    `long ${spec.key}: wrk completed ${wrkRedirects} redirects, Lifeline recorded ${humanClicks} human clicks ` +
      `(difference ${humanClicks - wrkRedirects}); server ${shutdown}; load average ${loadAfter}`,
  );
  say(
    `long ${spec.key}: last sample ÷ first ${(body.lastToFirst * 100).toFixed(1)}% (needs ≥ ${MIN_LAST_TO_FIRST * 100}%); ` +
      `RSS ${describeRss(body.samples)}; trend: ${describeTrend(body.samples)}`,
  );
  return {
    ...body,
    humanClicks,
    clicksByKind,
    shutdown,
    clicksPass: humanClicks === wrkRedirects && body.counters.clicksDropped === 0,
    loadAfter,
  };
}

/**
 * Why human clicks and wrk's redirects differ, when they do: clicks the full buffer dropped (counted by the
 * server), and requests wrk gave up on (timeouts: the server may still have answered and counted them, wrk did
 * not count the answer) or lost to socket errors. The stop requests rule out requests in flight at wrk's end.
 */
export function explainClickDifference(r: LongResult): string {
  const difference = r.humanClicks - (r.warmupRedirects + r.measuredRedirects);
  if (difference === 0) return 'none: every redirect wrk completed was recorded once, and nothing else';
  const dropped = r.counters.clicksDropped;
  const causes: string[] = [];
  if (dropped > 0) causes.push(`${dropped} clicks dropped by the full buffer (CLICK_BUFFER_MAX_KEYS)`);
  // What drops do not account for: clicks recorded for answers wrk never counted (timeouts, broken sockets).
  const rest = difference + dropped;
  if (rest !== 0)
    causes.push(
      r.errors >= Math.abs(rest)
        ? `${rest} within wrk's ${r.errors} socket errors or timeouts (requests wrk gave up on that the server answered and counted)`
        : `${rest} not explained by drops or wrk errors (${r.errors})`,
    );
  return causes.join('; ');
}

/** A drop of the V8 heap reserved between two samples larger than this share: a full collection ran between them. */
const FULL_COLLECTION_DROP = 0.05;

/**
 * RSS at the first and last samples, and how much it moved over the second half of the run (MiB); then the V8
 * heap reserved, the samples during which it fell (a full collection ran: "before sample N" is between the ends
 * of samples N − 1 and N), and how RSS moved from the first of them on. Until the first full collection the old
 * generation grows with what the scavenger promotes (V8 lets it reach a limit set from the heap live after the
 * last one), so a fresh process's RSS climbs to that high-water mark once; whether it keeps climbing after a
 * full collection is what tells a leak.
 */
function describeRss(samples: LongSample[]): string {
  const half = samples.slice(Math.floor(samples.length / 2));
  const spread = (from: LongSample[]) =>
    Math.max(...from.map((s) => s.rss)) - Math.min(...from.map((s) => s.rss));
  const signed = (mib: number) => `${mib >= 0 ? '+' : ''}${mib.toFixed(1)}`;
  const first = samples[0]!;
  const last = samples.at(-1)!;
  const collections = samples
    .slice(1)
    .filter((s, i) => s.heapTotal < samples[i]!.heapTotal * (1 - FULL_COLLECTION_DROP))
    .map((s) => s.index);
  const afterFirst = collections.length > 0 ? samples.slice(collections[0]! - 1) : [];
  return (
    `first sample ${first.rss} MiB, last ${last.rss} MiB; second half within ${spread(half).toFixed(1)} MiB ` +
    `(${signed(last.rss - half[0]!.rss)} MiB from its first sample to the last); V8 heap reserved ` +
    `${first.heapTotal} → ${last.heapTotal} MiB (used ${first.heapUsed} → ${last.heapUsed}, read at any point of a ` +
    `collection cycle); ` +
    (collections.length === 0
      ? 'no full collection showed (the heap reserved never fell by 5% between samples)'
      : `full collections before sample${collections.length > 1 ? 's' : ''} ${collections.join(', ')} (the heap ` +
        `reserved fell); from sample ${collections[0]} on, RSS within ${spread(afterFirst).toFixed(1)} MiB ` +
        `(${signed(last.rss - afterFirst[0]!.rss)} MiB to the last)`)
  );
}

/**
 * The least-squares line through the samples' throughput: where it ends against where it starts, and how far the
 * samples scatter around it (one minute's swing can fail last ÷ first on a shared machine; a decay moves the line).
 */
function describeTrend(samples: LongSample[]): string {
  // A smoke run shorter than two samples (BENCH_LONG_SECONDS ≤ BENCH_LONG_SAMPLE_SECONDS) has no line to fit.
  if (samples.length < 2) return 'one sample only, no line to fit';
  const t = fitTrend(samples.map((s) => s.rps));
  return (
    `the line fitted through the ${samples.length} samples ends at ${toPercent(t.lastToFirst)} of where it starts ` +
    `(${t.perSample >= 0 ? '+' : ''}${(t.perSample * 100).toFixed(2)}% of the mean per sample); the samples scatter ` +
    `${(t.scatter * 100).toFixed(1)}% around it (standard deviation ÷ mean)`
  );
}

/** The generated `long-<path>` section. */
export function renderLongSection(r: LongResult): string {
  const wrkRedirects = r.warmupRedirects + r.measuredRedirects;
  const m = r.main;
  return [
    ...describeMachine(),
    `- Machine load average (1/5/15 min): ${r.loadBefore} before, ${r.loadAfter} after`,
    `- ${r.spec.title}: ours (main.ts) alone, one continuous wrk -t1 -c${CONNECTIONS} run of ${r.seconds} s (uniformly random ` +
      `codes of ${r.spec.codes.toLocaleString('en')}, a browser User-Agent) after an in-order and a 3 s random warm-up.`,
    '',
    `| Sample | ${r.samples.map((s) => s.index).join(' | ')} |`,
    `|---|${r.samples.map(() => '---:').join('|')}|`,
    `| seconds | ${r.samples.map((s) => s.seconds).join(' | ')} |`,
    `| req/s (wrk, code requests sent) | ${r.samples.map((s) => Math.round(s.rps)).join(' | ')} |`,
    `| RSS MiB (sample end) | ${r.samples.map((s) => s.rss).join(' | ')} |`,
    `| V8 heap used MiB | ${r.samples.map((s) => s.heapUsed).join(' | ')} |`,
    `| V8 heap reserved MiB | ${r.samples.map((s) => s.heapTotal).join(' | ')} |`,
    '',
    `- Throughput: last sample ${Math.round(r.samples.at(-1)!.rps)} req/s = **${toPercent(r.lastToFirst)}** of the first ` +
      `(${Math.round(r.samples[0]!.rps)}); needs ≥ ${MIN_LAST_TO_FIRST * 100}%: ${r.throughputPass ? 'PASS' : 'FAIL'}. ` +
      `Whole run: ${Math.round(m.redirects / r.seconds)} redirects/s, p50 ${toMs(m.p50_us)} ms, p99 ${toMs(m.p99_us)} ms, ` +
      `max ${toMs(m.max_us)} ms; median sample ${Math.round(median(r.samples.map((s) => s.rps)))} req/s.`,
    `- Trend (read beside the criterion, not instead of it): ${describeTrend(r.samples)}.`,
    `- RSS: ${describeRss(r.samples)}.`,
    `- Clicks: wrk completed **${wrkRedirects.toLocaleString('en')}** redirects (its own count, requests − responses above 399: ` +
      `warm-up ${r.warmupRedirects.toLocaleString('en')} + measured ${r.measuredRedirects.toLocaleString('en')}; every run ended ` +
      `with ${TAIL_SECONDS} s of \`/_bench_stop\` requests, so none was in flight when wrk stopped). Lifeline recorded ` +
      `**${r.humanClicks.toLocaleString('en')}** human clicks (direct SQL sum over click_counts, kind = 'human', after the ` +
      `server's SIGTERM shutdown flush; it ended with ${r.shutdown}). Difference ${r.humanClicks - wrkRedirects}; ` +
      `lifeline_clicks_dropped_total ${r.counters.clicksDropped}` +
      `${r.counters.clicksDropped > 0 && wrkRedirects - r.humanClicks === r.counters.clicksDropped ? ' (the whole difference: clicks the full buffer dropped, CLICK_BUFFER_MAX_KEYS)' : ''}: ` +
      `${r.clicksPass ? 'PASS (exact)' : 'FAIL'}. Difference explained: ${explainClickDifference(r)}.`,
    `- Other clicks recorded: \`${JSON.stringify(r.clicksByKind)}\` (one bot: the readiness probe, which sends no User-Agent). ` +
      `Our lifeline_redirects_total deltas over warm-up and measured run (the server's own count; not_found: stop ` +
      `requests): \`${JSON.stringify(r.redirectsCounted)}\`.`,
    `- Errors (socket errors and timeouts, all runs): ${r.errors}; responses above 399 in the measured run: ${m.non_3xx}, ` +
      `of which at most ${m.stops_sent} were stop requests${m.non_3xx > m.stops_sent ? ` (so at least ${m.non_3xx - m.stops_sent} real errors)` : ''}.`,
    `- Where our lookups were answered (warm-up and measured run): \`${JSON.stringify(r.layers)}\``,
  ].join('\n');
}
