// `paths` mode: per path, ours, bare Map (THE baseline), the bare server doing the same lookup and the extra
// lines, alternated round by round; every figure a ratio against the same run's bare Map and same-lookup server.
import {
  alternateRounds,
  pairedRatios,
  type RoundResult,
  type ServerSummary,
  summarizeRounds,
  toMs,
  warmUp,
} from './alternate_rounds.ts';
import { clearBenchRedis, seedServingStore, setBenchRules } from './bench_data.ts';
import { describeLoad, describeMachine, formatLoad, toPercent, toTimes } from './bench_report.ts';
import type { BenchServer } from './bench_server.ts';
import { REDIS_KEY_PREFIX, say, WITH_NPM_START } from './bench_settings.ts';
import { type BytesVerdict, checkResponseBytes } from './check_response_bytes.ts';
import { diffCounts, readOurCounters } from './read_our_metrics.ts';
import { CONTESTANT_TITLES, type ContestantName, type PathSpec } from './redirect_paths.ts';
import { type RunContext, startContestant } from './start_contestant.ts';

export interface ServerLine {
  name: string;
  what: string;
  summary: ServerSummary;
  /** Median req/s ÷ bare Map's, and ÷ the same-lookup server's. */
  vsMap: number;
  vsSame: number;
  /** Median p99 ÷ bare Map's, and ÷ the same-lookup server's. */
  p99VsMap: number;
  p99VsSame: number;
}

export interface PathResult {
  spec: PathSpec;
  lines: ServerLine[];
  rounds: RoundResult[];
  bytes: BytesVerdict[];
  skipped: string[];
  /** lifeline_link_lookups_total deltas over the measured rounds, per server of ours (ours, hono-only…). */
  layers: Record<string, Record<string, number>>;
  loadBefore: string;
  loadAfter: string;
  pass: boolean;
  notes: string[];
}

/** Starts `names` in order (ours first, so the others' bytes can be compared with it), skipping what cannot run. */
export async function startContestants(
  names: ContestantName[],
  spec: PathSpec,
  ctx: RunContext,
  started: BenchServer[],
  skipped: string[],
  notes: string[],
): Promise<void> {
  for (const name of names) {
    say(`${spec.key}: starting ${name}`);
    const server = await startContestant(name, spec, ctx);
    if (!server) {
      skipped.push(name);
      continue;
    }
    if ('settleSeconds' in server) {
      const n = server as BenchServer & {
        settleSeconds: number;
        syncWorkflows: number;
        deferredSyncs: number;
      };
      notes.push(
        `npm start's ${spec.codes.toLocaleString('en')} links were created through its API; ${n.syncWorkflows} sync ` +
          `workflows ran and were done ${n.settleSeconds.toFixed(0)} s later, before any round` +
          (n.deferredSyncs > 0
            ? `; the API deferred ${n.deferredSyncs} links' syncs to reconciliation (its background sync stops a ` +
              'batch at the first start Temporal does not accept in time; see the log)'
            : ''),
      );
    }
    started.push(server);
  }
}

/** Ratios of every server against bare Map and the same-lookup server, from the same rounds. */
export function toServerLines(
  rounds: RoundResult[],
  servers: BenchServer[],
  sameLookup: string,
): ServerLine[] {
  // Ratios are paired: each round's figure against the baseline's in the same round, the median over rounds.
  return servers.map((s) => {
    const summary = summarizeRounds(rounds, s.name);
    const vsMap = pairedRatios(rounds, s.name, 'bare-map');
    const vsSame = pairedRatios(rounds, s.name, sameLookup);
    return {
      name: s.name,
      what: s.what,
      summary,
      vsMap: vsMap.rps,
      vsSame: vsSame.rps,
      p99VsMap: vsMap.p99,
      p99VsSame: vsSame.p99,
    };
  });
}

/** The bar for `npm start` (the embedded default) on the LRU path, against bare-map. */
const NPM_START_THRESHOLD = { rps: 0.8, p99: 2 };

export async function benchPath(spec: PathSpec, ctx: RunContext): Promise<PathResult> {
  const loadBefore = formatLoad();
  say(`— ${spec.title}: load average ${loadBefore}`);
  if (spec.key === 'serving_store') await seedServingStore(ctx.dbName, REDIS_KEY_PREFIX, spec.codes);
  if (spec.rules) {
    await setBenchRules(ctx.dbName, spec.codes, true);
    // random_codes.lua sends one of these with each request (run_wrk.ts passes it on).
    process.env.BENCH_ACCEPT_LANGUAGES = spec.rules.acceptLanguages.join('|');
  }
  const names: ContestantName[] = [
    'ours',
    'bare-map',
    ...(spec.sameLookup === 'bare-map' ? [] : [spec.sameLookup]),
    ...spec.extras.filter((name) => WITH_NPM_START || name !== 'npm-start'),
  ];
  const servers: BenchServer[] = [];
  const skipped: string[] = [];
  const notes: string[] = [];
  try {
    await startContestants(names, spec, ctx, servers, skipped, notes);
    const ours = servers[0]!;
    const bytes = await checkResponseBytes(ours, servers, { oursVaries: spec.rules !== undefined });
    for (const s of servers) await warmUp(s, spec.codes);
    const ourServers = servers.filter((s) => s.ours);
    const before = await Promise.all(ourServers.map((s) => readOurCounters(s)));
    // Ours, the same-lookup baseline and bare-map back to back in every round (see alternateRounds).
    // npm start (on the LRU path) is judged against bare-map too: next to it, on the other side from ours.
    const rounds = await alternateRounds(spec.key, servers, spec.codes, [
      'ours',
      spec.sameLookup,
      ...(spec.sameLookup === 'bare-map' ? [] : ['bare-map']),
      'npm-start',
    ]);
    const layers: Record<string, Record<string, number>> = {};
    for (const [i, s] of ourServers.entries())
      layers[s.name] = diffCounts((await readOurCounters(s)).lookups, before[i]!.lookups);
    const lines = toServerLines(rounds, servers, spec.sameLookup);
    const o = lines.find((l) => l.name === 'ours')!;
    const pass =
      o.vsSame >= spec.threshold.rps &&
      (spec.threshold.p99 === undefined || o.p99VsSame <= spec.threshold.p99) &&
      lines.every((l) => !['ours', 'bare-map', spec.sameLookup].includes(l.name) || l.summary.errors === 0);
    const npmStart = lines.find((l) => l.name === 'npm-start');
    if (npmStart) {
      // The embedded default on the LRU path, ≥ 80% of bare-map with p99 ≤ 2×.
      const ok = npmStart.vsMap >= NPM_START_THRESHOLD.rps && npmStart.p99VsMap <= NPM_START_THRESHOLD.p99;
      notes.push(
        `npm start: ${toPercent(npmStart.vsMap)} of bare-map, p99 ${toTimes(npmStart.p99VsMap)} ` +
          `(≥${NPM_START_THRESHOLD.rps * 100}%, p99 ≤${NPM_START_THRESHOLD.p99}×): ${ok ? 'PASS' : 'FAIL'}`,
      );
      say(notes[notes.length - 1]!);
    }
    const loadAfter = formatLoad();
    say(`— ${spec.title}: done, load average ${loadAfter}`);
    return { spec, lines, rounds, bytes, skipped, layers, loadBefore, loadAfter, pass, notes };
  } finally {
    for (const s of servers) await s.stop().catch((error) => say(`stopping ${s.name}: ${error}`));
    await clearBenchRedis();
    if (spec.rules) {
      delete process.env.BENCH_ACCEPT_LANGUAGES;
      await setBenchRules(ctx.dbName, spec.codes, false);
    }
  }
}

/** One line per path for the log. */
export function describePathResult(r: PathResult): string {
  const o = r.lines.find((l) => l.name === 'ours')!;
  const m = r.lines.find((l) => l.name === 'bare-map')!;
  return (
    `${r.spec.title}: ours ${Math.round(o.summary.rps)} req/s = ${toPercent(o.vsSame)} of ${r.spec.sameLookup}` +
    `${r.spec.sameLookup === 'bare-map' ? '' : `, ${toPercent(o.vsMap)} of bare-map (${Math.round(m.summary.rps)})`}; ` +
    `p99 ${toMs(o.summary.p99)} ms = ${toTimes(o.p99VsSame)} ${r.spec.sameLookup}: ${r.pass ? 'PASS' : 'FAIL'}`
  );
}

function describeThreshold(spec: PathSpec): string {
  return `≥${spec.threshold.rps * 100}% of ${spec.sameLookup}${spec.threshold.p99 ? `, p99 ≤${spec.threshold.p99}×` : ''}`;
}

/** A path's table of every server; one ratio column per baseline (on the LRU path bare-map is both). */
function renderServerTable(r: PathResult): string[] {
  const same = r.spec.sameLookup;
  const both = same !== 'bare-map';
  const rows = [
    `| Server | What runs | req/s | ÷ bare-map |${both ? ` ÷ ${same} |` : ''} p50 / p99 (ms) | p99 ÷ bare-map |${both ? ` p99 ÷ ${same} |` : ''} CPU µs/req | RSS MiB | errors |`,
    `|---|---|---:|---:|${both ? '---:|' : ''}---:|---:|${both ? '---:|' : ''}---:|---:|---:|`,
  ];
  for (const l of r.lines) {
    rows.push(
      `| ${l.name} | ${CONTESTANT_TITLES[l.name as ContestantName] ?? l.what} | ${Math.round(l.summary.rps)} | ${toPercent(l.vsMap)} |` +
        `${both ? ` ${toPercent(l.vsSame)} |` : ''} ${toMs(l.summary.p50)} / ${toMs(l.summary.p99)} | ${toTimes(l.p99VsMap)} |` +
        `${both ? ` ${toTimes(l.p99VsSame)} |` : ''} ${l.summary.cpu.toFixed(1)} | ${l.summary.rss} | ${l.summary.errors} |`,
    );
  }
  return rows;
}

/** The generated `paths` section. */
export function renderPathsSection(results: PathResult[], loadBefore: string, loadAfter: string): string {
  const out = [
    ...describeMachine(),
    `- Machine load average (1/5/15 min; the 2 cores are shared with other work): ${loadBefore} before, ${loadAfter} after`,
    describeLoad(),
    '- Every ratio is against servers measured in the same rounds: **bare-map** (node:http + a Map, THE baseline) and ' +
      'the bare server doing the same lookup as ours on that path (bare-map, bare-redis, bare-postgres). ' +
      '"bare-resolver" runs OUR resolver inside a bare node:http server: an extra line, not a baseline.',
    '',
    '| Path | Ours req/s | Same-lookup baseline req/s | bare-map req/s | Ours ÷ same-lookup | Ours ÷ bare-map | p99 ours (ms) | p99 ÷ same-lookup | p99 ÷ bare-map | Threshold | Result |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of results) {
    const o = r.lines.find((l) => l.name === 'ours')!;
    const same = r.lines.find((l) => l.name === r.spec.sameLookup)!;
    const map = r.lines.find((l) => l.name === 'bare-map')!;
    out.push(
      `| ${r.spec.title} | ${Math.round(o.summary.rps)} | ${same.name} ${Math.round(same.summary.rps)} | ${Math.round(map.summary.rps)} | ` +
        `**${toPercent(o.vsSame)}** | ${toPercent(o.vsMap)} | ${toMs(o.summary.p99)} | ${toTimes(o.p99VsSame)} | ${toTimes(o.p99VsMap)} | ` +
        `${describeThreshold(r.spec)} | ${r.pass ? 'PASS' : 'FAIL'} |`,
    );
  }
  for (const r of results) {
    out.push(
      '',
      `#### ${r.spec.title}`,
      '',
      `Load average ${r.loadBefore} before, ${r.loadAfter} after.${r.skipped.length > 0 ? ` Skipped: ${r.skipped.join(', ')} (see the log).` : ''}`,
      ...r.notes.map((n) => `${n}.`),
      '',
      ...renderServerTable(r),
    );
    out.push(
      '',
      `Bytes of one answer (\`GET /bk1\`, twice on one connection) against ours, Date ignored: ${r.bytes
        .map(
          (b) =>
            `${b.server} ${b.differences.length === 0 ? 'identical' : `differs: ${b.differences.join('; ')}`}`,
        )
        .join('; ')}.`,
      '',
      `Where our servers' lookups were answered during the rounds (lifeline_link_lookups_total deltas): ${Object.entries(
        r.layers,
      )
        .map(([name, l]) => `${name} \`${JSON.stringify(l)}\``)
        .join('; ')}`,
    );
  }
  out.push(
    '',
    '<details><summary>Every round (ratios against bare-map in the same round)</summary>',
    '',
    '| Path | Round | Server | req/s | ÷ bare-map | p50 ms | p99 ms | p99 ÷ bare-map | CPU µs/req | errors | RSS MiB |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of results) {
    for (const x of r.rounds) {
      const map = r.rounds.find((y) => y.round === x.round && y.server === 'bare-map')!;
      out.push(
        `| ${r.spec.key} | ${x.round} | ${x.server} | ${Math.round(x.rps)} | ${toPercent(x.rps / map.rps)} | ${toMs(x.p50)} | ` +
          `${toMs(x.p99)} | ${toTimes(x.p99 / map.p99)} | ${x.cpuPerRequest.toFixed(1)} | ${x.errors} | ${x.rss} |`,
      );
    }
  }
  out.push('', '</details>');
  return out.join('\n');
}

/** The run-history line of a full paths run. */
export function renderHistoryLine(
  results: PathResult[],
  loadBefore: string,
  loadAfter: string,
  rounds: string,
): string {
  return (
    `- ${new Date().toISOString().slice(0, 16)}Z, load ${loadBefore.split(' / ')[0]}→${loadAfter.split(' / ')[0]}, ${rounds}, ` +
    'ratios to bare servers that import nothing of ours: ' +
    results
      .map((r) => {
        const o = r.lines.find((l) => l.name === 'ours')!;
        return (
          `${r.spec.key} ${toPercent(o.vsSame)} of ${r.spec.sameLookup}` +
          `${r.spec.sameLookup === 'bare-map' ? '' : ` (${toPercent(o.vsMap)} of bare-map)`} / p99 ${toTimes(o.p99VsSame)} ${r.pass ? 'pass' : 'FAIL'}`
        );
      })
      .join('; ')
  );
}
