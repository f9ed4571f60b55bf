// The memory run: a million links requested at random for minutes, our server's RSS and heap sampled every 10 s.
import { spawnSync } from 'node:child_process';
import { describeMachine } from './bench_report.ts';
import { BENCH_METRICS_TOKEN, httpGet } from './bench_server.ts';
import { CONNECTIONS, MEMORY_FORM, MEMORY_SECONDS, MEMORY_SERVER_ENV, ROOT, say } from './bench_settings.ts';
import { readOurCounters, readOurMemory } from './read_our_metrics.ts';
import { runWrk } from './run_wrk.ts';
import { startOurs } from './start_ours.ts';

export async function benchMemory(links: number) {
  say(`— memory: ${links.toLocaleString('en')} links, random codes for ${MEMORY_SECONDS} s, RSS every 10 s`);
  // BENCH_SERVER_NODE_OPTIONS (e.g. --max-old-space-size=256): what a deployment that caps the heap would see.
  const nodeOptions = process.env.BENCH_SERVER_NODE_OPTIONS;
  if (MEMORY_FORM === 'built') {
    say('memory: npm run build (the server runs dist/web.mjs)');
    const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
  }
  const serverEnv = { ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}), ...MEMORY_SERVER_ENV };
  const built = MEMORY_FORM === 'built' ? 'dist/web.mjs' : undefined;
  // First a start that reviews every stored target itself (ADR 0102): each bench start is on a new port, so a new
  // short domain and target policy, as after a rule or policy change when no migration step ran before the web.
  let began = Date.now();
  const reviewing = await startOurs(serverEnv, [], built);
  const reviewingStart = {
    seconds: (Date.now() - began) / 1000,
    ...(await readOurMemory(reviewing).finally(() => reviewing.stop())),
  };
  // The run: the migration step, then the web process, as a deployment's migrate job and web tier start.
  began = Date.now();
  const ours = await startOurs(serverEnv, [], built, true);
  const startSeconds = (Date.now() - began) / 1000;
  type Sample = { t: number; rss: number; heapUsed: number; heapTotal: number };
  const series: Sample[] = [];
  const started = Date.now();
  const sample = async () => {
    const t = Math.round((Date.now() - started) / 1000);
    series.push({ t, ...(await readOurMemory(ours)) });
  };
  try {
    await sample();
    const pending: Promise<void>[] = [];
    const sampler = setInterval(() => pending.push(sample()), 10_000);
    const r = await runWrk(ours.url, MEMORY_SECONDS, { codes: links, order: 'random' });
    clearInterval(sampler);
    await Promise.all(pending);
    await sample();
    const layers = (await readOurCounters(ours)).lookups;
    const gauges = await readEndGauges(ours.url);
    const errors = r.non_3xx + r.socketErrors;
    say(`memory: ${Math.round(r.rps)} req/s, ${r.requests} requests, errors ${errors}`);
    series.sort((a, b) => a.t - b.t);
    return {
      links,
      series,
      requests: r.requests,
      rps: r.rps,
      errors,
      layers,
      gauges,
      reviewingStart,
      startSeconds,
    };
  } finally {
    await ours.stop();
  }
}

/**
 * Our /metrics at the end: the LRU's estimated bytes held, its budget and entries (ADR 0085); and the garbage
 * collections of the whole run by kind (`gc.major.count`, `gc.minor.seconds`…, from Node's default metrics).
 */
async function readEndGauges(url: string): Promise<Record<string, number>> {
  const { body } = await httpGet(`${url}/metrics`, { Authorization: `Bearer ${BENCH_METRICS_TOKEN}` });
  const out: Record<string, number> = {};
  for (const m of body.matchAll(/^lifeline_resolver_cache_(bytes|max_bytes|entries) (\S+)$/gm))
    out[m[1]!] = Number(m[2]);
  for (const m of body.matchAll(/^nodejs_gc_duration_seconds_(sum|count)\{kind="(\w+)"\} (\S+)$/gm))
    out[`gc.${m[2]}.${m[1] === 'sum' ? 'seconds' : 'count'}`] = Number(m[3]);
  return out;
}

/** "major 12 (0.8 s), minor 3,400 (5.1 s)…" from readEndGauges's gc entries. */
function describeCollections(gauges: Record<string, number>): string {
  const kinds = Object.keys(gauges)
    .filter((k) => k.startsWith('gc.') && k.endsWith('.count'))
    .map((k) => k.split('.')[1]!);
  return kinds
    .map((kind) => {
      const count = gauges[`gc.${kind}.count`]!;
      return `${kind} ${count.toLocaleString('en')} (${(gauges[`gc.${kind}.seconds`] ?? 0).toFixed(1)} s)`;
    })
    .join(', ');
}

export function renderMemorySection(r: Awaited<ReturnType<typeof benchMemory>>): string {
  const peak = Math.max(...r.series.map((s) => s.rss));
  const tail = r.series.slice(-Math.max(3, Math.floor(r.series.length / 3)));
  const tailSpread = Math.max(...tail.map((s) => s.rss)) - Math.min(...tail.map((s) => s.rss));
  const nodeOptions = process.env.BENCH_SERVER_NODE_OPTIONS;
  const extraEnv = Object.entries(MEMORY_SERVER_ENV).map(([k, v]) => `${k}=${v}`);
  const form =
    MEMORY_FORM === 'built'
      ? 'the built server (dist/web.mjs with the web flags, as `npm run start:web` and the image run it)'
      : 'the source server (main.ts through tsx with the web flags, as `npm run web`)';
  const mib = (n: number | undefined) => (n === undefined ? '?' : (n / 1048576).toFixed(1));
  return [
    ...describeMachine(),
    `- ${r.links.toLocaleString('en')} links in Postgres; ${form}; wrk -t1 -c${CONNECTIONS} requesting uniformly random codes for ${MEMORY_SECONDS} s (${r.requests.toLocaleString('en')} requests, ${Math.round(r.rps)} req/s, ${r.errors} errors); ${extraEnv.length > 0 ? `server environment ${extraEnv.join(' ')}` : 'default LRU settings'}${nodeOptions ? `; server NODE_OPTIONS=${nodeOptions}` : ''}.`,
    `- The run's server started after the migration step, as a deployment's migrate job runs it (ready ${r.startSeconds.toFixed(1)} s after the step began). A start without that step, reviewing every stored target itself: ready after ${r.reviewingStart.seconds.toFixed(1)} s, RSS ${r.reviewingStart.rss} MiB, V8 heap ${r.reviewingStart.heapUsed} MiB used of ${r.reviewingStart.heapTotal} MiB reserved.`,
    `- RSS of our server: start ${r.series[0]!.rss} MiB, peak ${peak} MiB, last third within ${tailSpread.toFixed(1)} MiB (last ${r.series.at(-1)!.rss} MiB).`,
    `- V8 heap at the end: ${r.series.at(-1)!.heapUsed} MiB used of ${r.series.at(-1)!.heapTotal} MiB reserved (the rest of the RSS: code, native buffers and memory the allocator keeps).`,
    `- LRU at the end: ${r.gauges.entries ?? '?'} entries, ${mib(r.gauges.bytes)} MiB estimated of ${mib(r.gauges.max_bytes)} MiB (RESOLVER_CACHE_MAX_BYTES; 0: entries only).`,
    `- Lookup counters at the end: \`${JSON.stringify(r.layers)}\``,
    `- Garbage collections since the server started: ${describeCollections(r.gauges) || 'not reported'}.`,
    '',
    `| t (s) | ${r.series.map((s) => s.t).join(' | ')} |`,
    `|---|${r.series.map(() => '---:').join('|')}|`,
    `| RSS (MiB) | ${r.series.map((s) => s.rss).join(' | ')} |`,
    `| V8 heap used (MiB) | ${r.series.map((s) => s.heapUsed).join(' | ')} |`,
    `| V8 heap reserved (MiB) | ${r.series.map((s) => s.heapTotal).join(' | ')} |`,
  ].join('\n');
}
