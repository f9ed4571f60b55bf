// `scale` mode: ours with one web process, ours with WEB_CONCURRENCY=2 (two processes on one port,
// SO_REUSEPORT) and bare Map, alternated on the LRU-hit path. CPU and RSS of the two-process server are summed over
// its web processes (the primary serves nothing). What a 2-core machine can show: wrk needs most of a core, so two
// web processes share what is left with it; the figure to read is CPU per request (the cost of a redirect does
// not change with the process count) and whether throughput moves at all, not a doubling.
import { alternateRounds, toMs, warmUp } from './alternate_rounds.ts';
import { describeLoad, describeMachine, formatLoad, toPercent, toTimes } from './bench_report.ts';
import type { BenchServer } from './bench_server.ts';
import { say } from './bench_settings.ts';
import { type ServerLine, startContestants, toServerLines } from './paths_mode.ts';
import { diffCounts, readOurCounters } from './read_our_metrics.ts';
import { findPath } from './redirect_paths.ts';
import type { RunContext } from './start_contestant.ts';

export interface ScaleResult {
  one: ServerLine;
  two: ServerLine;
  map: ServerLine;
  /** lifeline_link_lookups_total deltas over the rounds, per server of ours (summed over web processes). */
  layers: Record<string, Record<string, number>>;
  cores: number;
  loadBefore: string;
  loadAfter: string;
}

export async function benchScale(ctx: RunContext, cores: number): Promise<ScaleResult> {
  const spec = findPath('lru');
  const loadBefore = formatLoad();
  say(`— scale (LRU hit): ours ×1, ours ×2 (WEB_CONCURRENCY=2), bare-map; load average ${loadBefore}`);
  const servers: BenchServer[] = [];
  try {
    await startContestants(['ours', 'ours-x2', 'bare-map'], spec, ctx, servers, [], []);
    for (const s of servers) await warmUp(s, spec.codes);
    const ourServers = servers.filter((s) => s.ours);
    const before = await Promise.all(ourServers.map((s) => readOurCounters(s)));
    const rounds = await alternateRounds('scale', servers, spec.codes);
    const layers: Record<string, Record<string, number>> = {};
    for (const [i, s] of ourServers.entries())
      layers[s.name] = diffCounts((await readOurCounters(s)).lookups, before[i]!.lookups);
    const lines = toServerLines(rounds, servers, 'bare-map');
    const pick = (name: string) => lines.find((l) => l.name === name)!;
    return {
      one: pick('ours'),
      two: pick('ours-x2'),
      map: pick('bare-map'),
      layers,
      cores,
      loadBefore,
      loadAfter: formatLoad(),
    };
  } finally {
    for (const s of servers) await s.stop().catch((error) => say(`stopping ${s.name}: ${error}`));
  }
}

/** One line for the log. */
export function describeScaleResult(r: ScaleResult): string {
  return (
    `scale: ×2 ÷ ×1 throughput ${toPercent(r.two.summary.rps / r.one.summary.rps)}, p99 ${toTimes(r.two.summary.p99 / r.one.summary.p99)}; ` +
    `×1 ${toPercent(r.one.vsMap)} of bare-map, ×2 ${toPercent(r.two.vsMap)}; CPU µs/req ×1 ${r.one.summary.cpu.toFixed(1)}, ` +
    `×2 ${r.two.summary.cpu.toFixed(1)}, bare-map ${r.map.summary.cpu.toFixed(1)}`
  );
}

/** The generated `scale` section. */
export function renderScaleSection(r: ScaleResult): string {
  const row = (l: ServerLine, title: string) =>
    `| ${title} | ${Math.round(l.summary.rps)} | ${toPercent(l.vsMap)} | ${toMs(l.summary.p50)} / ${toMs(l.summary.p99)} | ` +
    `${toTimes(l.p99VsMap)} | ${l.summary.cpu.toFixed(1)} | ${l.summary.rss} | ${l.summary.errors} |`;
  return [
    ...describeMachine(),
    `- Machine load average (1/5/15 min): ${r.loadBefore} before, ${r.loadAfter} after`,
    describeLoad(),
    `- LRU-hit path (10,000 codes). CPU and RSS of ×2 are summed over its two web processes (the primary serves nothing).`,
    '',
    '| Server | req/s | ÷ bare-map | p50 / p99 (ms) | p99 ÷ bare-map | CPU µs/req | RSS MiB | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    row(r.one, 'ours, one web process (WEB_CONCURRENCY=1)'),
    row(r.two, 'ours, WEB_CONCURRENCY=2'),
    row(r.map, 'bare node:http + Map (one process)'),
    '',
    `- ×2 ÷ ×1: throughput **${toPercent(r.two.summary.rps / r.one.summary.rps)}**, p99 ${toTimes(r.two.summary.p99 / r.one.summary.p99)}, ` +
      `CPU per request ${toTimes(r.two.summary.cpu / r.one.summary.cpu)}.`,
    `- What ${r.cores} core${r.cores === 1 ? '' : 's'} can show: wrk (one thread) on the same machine needs close to a core ` +
      'of its own, so the web processes share what is left with it and with each other; a second process can only ' +
      'use CPU that one process left idle. The comparable figure is CPU per request (the cost of a redirect, which ' +
      'the process count should not change); more cores than the load generator needs are what WEB_CONCURRENCY ' +
      'turns into throughput.',
    `- Where our lookups were answered during the rounds: ${Object.entries(r.layers)
      .map(([name, l]) => `${name} \`${JSON.stringify(l)}\``)
      .join('; ')}`,
  ].join('\n');
}
