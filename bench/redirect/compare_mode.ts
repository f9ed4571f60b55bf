// `compare` mode, the refactor check: ours from this checkout (A) and ours from BENCH_OURS_B_ROOT (B: its own
// main.ts, its own node_modules, a database and serving-store prefix of its own, seeded alike), alternated with
// bare Map over the three paths; B ÷ A per path, and both against bare Map.
import { execFileSync } from 'node:child_process';
import { alternateRounds, toMs, warmUp } from './alternate_rounds.ts';
import { clearBenchRedis, seedServingStore } from './bench_data.ts';
import { describeLoad, describeMachine, formatLoad, toPercent, toTimes } from './bench_report.ts';
import type { BenchServer } from './bench_server.ts';
import { REDIS_KEY_PREFIX, say } from './bench_settings.ts';
import { type BytesVerdict, checkResponseBytes } from './check_response_bytes.ts';
import { type ServerLine, startContestants, toServerLines } from './paths_mode.ts';
import type { PathSpec } from './redirect_paths.ts';
import type { RunContext } from './start_contestant.ts';

export interface CompareResult {
  spec: PathSpec;
  a: ServerLine;
  b: ServerLine;
  map: ServerLine;
  bytes: BytesVerdict[];
  loadBefore: string;
  loadAfter: string;
}

export async function compareOnPath(spec: PathSpec, ctx: RunContext): Promise<CompareResult> {
  const b = ctx.oursB!;
  const loadBefore = formatLoad();
  say(`— compare ${spec.title}: load average ${loadBefore}`);
  if (spec.key === 'serving_store') {
    await seedServingStore(ctx.dbName, REDIS_KEY_PREFIX, spec.codes);
    await seedServingStore(b.dbName, b.redisKeyPrefix, spec.codes);
  }
  const servers: BenchServer[] = [];
  try {
    await startContestants(['ours', 'ours-b', 'bare-map'], spec, ctx, servers, [], []);
    const bytes = await checkResponseBytes(servers[0]!, servers);
    for (const s of servers) await warmUp(s, spec.codes);
    const rounds = await alternateRounds(`compare ${spec.key}`, servers, spec.codes);
    const lines = toServerLines(rounds, servers, 'bare-map');
    const pick = (name: string) => lines.find((l) => l.name === name)!;
    return {
      spec,
      a: pick('ours'),
      b: pick('ours-b'),
      map: pick('bare-map'),
      bytes,
      loadBefore,
      loadAfter: formatLoad(),
    };
  } finally {
    for (const s of servers) await s.stop().catch((error) => say(`stopping ${s.name}: ${error}`));
    await clearBenchRedis();
  }
}

/** The commit of a checkout, for the report. */
function describeCheckout(root: string): string {
  try {
    const git = (args: string[]) =>
      execFileSync('git', ['-C', root, ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    const commit = git(['rev-parse', '--short', 'HEAD']);
    const dirty = git(['status', '--porcelain', '--untracked-files=no']);
    return `${root} at ${commit}${dirty ? ' (with uncommitted changes)' : ''}`;
  } catch {
    return `${root} (not a git checkout)`;
  }
}

/** One line per path for stdout. */
export function describeCompareResult(r: CompareResult): string {
  return (
    `${r.spec.title}: B ÷ A throughput ${toPercent(r.b.summary.rps / r.a.summary.rps)}, p99 ${toTimes(r.b.summary.p99 / r.a.summary.p99)}; ` +
    `A ${toPercent(r.a.vsMap)} of bare-map, B ${toPercent(r.b.vsMap)} of bare-map`
  );
}

/** The generated `compare` section. */
export function renderCompareSection(results: CompareResult[], aRoot: string, bRoot: string): string {
  const out = [
    ...describeMachine(),
    `- A: ${describeCheckout(aRoot)}; B: ${describeCheckout(bRoot)} (each its own main.ts and node_modules, its own database seeded alike)`,
    describeLoad(),
    '',
    '| Path | A req/s | B req/s | **B ÷ A** | A p99 ms | B p99 ms | **p99 B ÷ A** | bare-map req/s | A ÷ bare-map | B ÷ bare-map | p99 A ÷ bare-map | p99 B ÷ bare-map | load before → after |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    out.push(
      `| ${r.spec.title} | ${Math.round(r.a.summary.rps)} | ${Math.round(r.b.summary.rps)} | ${toPercent(r.b.summary.rps / r.a.summary.rps)} | ` +
        `${toMs(r.a.summary.p99)} | ${toMs(r.b.summary.p99)} | ${toTimes(r.b.summary.p99 / r.a.summary.p99)} | ` +
        `${Math.round(r.map.summary.rps)} | ${toPercent(r.a.vsMap)} | ${toPercent(r.b.vsMap)} | ${toTimes(r.a.p99VsMap)} | ` +
        `${toTimes(r.b.p99VsMap)} | ${r.loadBefore.split(' / ')[0]} → ${r.loadAfter.split(' / ')[0]} |`,
    );
  }
  out.push('');
  for (const r of results) {
    const errors = [r.a, r.b, r.map].map((l) => `${l.name} ${l.summary.errors}`).join(', ');
    out.push(
      `- ${r.spec.title}: errors ${errors}; CPU µs/req A ${r.a.summary.cpu.toFixed(1)}, B ${r.b.summary.cpu.toFixed(1)}, ` +
        `bare-map ${r.map.summary.cpu.toFixed(1)}; bytes against A: ${r.bytes
          .map(
            (x) =>
              `${x.server} ${x.differences.length === 0 ? 'identical' : `differs: ${x.differences.join('; ')}`}`,
          )
          .join('; ')}.`,
    );
  }
  return out.join('\n');
}
