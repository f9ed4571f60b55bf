// `outside` mode: the redirect as someone outside the project measures it. Few links, made through the public
// API of a server started the way a newcomer starts it (`npm run web`, `npm start`: no NODE_ENV, default log
// level, default cache TTL), plain wrk (no User-Agent), no waiting for a quiet machine between rounds, a short
// and a long set of alternated rounds, and the bare servers on Node's default flags. Each of ours is paired with
// its bare server round by round; npm start runs in a phase of its own, so its Temporal dev server and worker
// idle only during its own rounds.
//
// Knobs (besides the run's): BENCH_OUTSIDE_LINKS (1000), BENCH_OUTSIDE_SETS (`3x10,5x15`: rounds × seconds per
// set), BENCH_OUTSIDE_PHASES (`web,npm-start,store`), BENCH_OUTSIDE_UA (`browser`: the paths mode's browser
// User-Agent instead of none), BENCH_OUTSIDE_WEB_INSTANCES (1: the `web` phase again with that many fresh
// `npm run web` processes one after another, each against the same bare server: how much one process differs
// from the next), BENCH_OUTSIDE_QUIET=1 (wait for a quiet machine before each round, as `paths`
// does), BENCH_OUTSIDE_WEB_ENV (`NAME=value,…` added to the `npm run web` contestants, for experiments; say so
// beside any figure it produced).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listChildPids } from '../../devkit/harness/process_tree.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import {
  alternateRounds,
  pairedRatios,
  type RoundResult,
  summarizeRounds,
  toMs,
  warmUp,
} from './alternate_rounds.ts';
import { seedServingStore, writeLinksFile } from './bench_data.ts';
import { describeMachine, formatLoad, toPercent, toTimes } from './bench_report.ts';
import { type BenchServer, httpGet, stopChild } from './bench_server.ts';
import {
  BROWSER_USER_AGENT,
  CODE_PREFIX,
  CONNECTIONS,
  REDIS_KEY_PREFIX,
  REDIS_URL,
  ROOT,
  say,
  sleep,
} from './bench_settings.ts';
import { createLinks, startNpmStart } from './npm_start_server.ts';
import type { PathSpec } from './redirect_paths.ts';
import { QUIET_BOOTSTRAP_ENV, type RunContext, startContestant } from './start_contestant.ts';

const env = process.env;
const LINKS = Number(env.BENCH_OUTSIDE_LINKS ?? 1000);
const SETS = (env.BENCH_OUTSIDE_SETS ?? '3x10,5x15').split(',').map((set) => {
  const [rounds, seconds] = set.split('x').map(Number);
  if (!rounds || !seconds) throw new Error(`BENCH_OUTSIDE_SETS: "${set}" is not <rounds>x<seconds>`);
  return { rounds, seconds };
});
const PHASES = (env.BENCH_OUTSIDE_PHASES ?? 'web,npm-start,store').split(',').filter(Boolean);
const WEB_INSTANCES = Number(env.BENCH_OUTSIDE_WEB_INSTANCES ?? 1);
const USER_AGENT = env.BENCH_OUTSIDE_UA === 'browser' ? BROWSER_USER_AGENT : '';
const WAIT_FOR_QUIET = env.BENCH_OUTSIDE_QUIET === '1';
const WEB_EXTRA_ENV: Record<string, string> = Object.fromEntries(
  (env.BENCH_OUTSIDE_WEB_ENV ?? '')
    .split(',')
    .filter((pair) => pair.includes('='))
    .map((pair) => [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1)]),
);

/** The bare servers are started through the paths' machinery; this spec only names the mode. */
const SPEC: PathSpec = {
  key: 'lru',
  title: 'outside',
  env: {},
  codes: LINKS,
  sameLookup: 'bare-map',
  threshold: { rps: 0.9, p99: 1.5 },
  extras: [],
};

/** The node process of `npm run web` (npm → sh → node main.ts): the one whose CPU and RSS are the server's. */
function webPidsOf(npm: ChildProcess): number[] {
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const child of listChildPids(pid)) {
      try {
        const args = readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0');
        if (args.some((a) => a === 'main.ts' || a.endsWith('/main.ts'))) found.push(child);
      } catch {}
      walk(child);
    }
  };
  walk(npm.pid!);
  return found;
}

/**
 * `npm run web` as a newcomer runs it against `databaseUrl`: the credentials set (so none are generated and
 * printed), nothing else of the bench's (no NODE_ENV, LOG_LEVEL or cache TTL); `extra` for the store phase.
 */
async function startNpmRunWeb(
  name: string,
  databaseUrl: string,
  extra: Record<string, string>,
): Promise<BenchServer> {
  const port = await getFreePort();
  const child = spawn('npm', ['run', '--silent', 'web'], {
    cwd: ROOT,
    env: {
      PATH: env.PATH ?? '',
      HOME: env.HOME ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      ...QUIET_BOOTSTRAP_ENV,
      ...extra,
      ...WEB_EXTRA_ENV,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await httpGet(`${url}/livez`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`${name} (npm run web) did not start: ${stderr}`);
    await sleep(200);
  }
  return {
    name,
    port,
    url,
    pid: child.pid!,
    what: 'npm run web',
    fillsCache: true,
    ours: true,
    servingPids: () => webPidsOf(child),
    stop: async (graceMs?: number) => {
      // npm does not pass SIGTERM on to its script's process group everywhere: signal the group.
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {}
      return stopChild(child, graceMs);
    },
  };
}

interface SetResult {
  rounds: number;
  seconds: number;
  ours: string;
  bare: string;
  ratio: { rps: number; p99: number };
  perRound: { rps: number; p99: number }[];
  oursSummary: ReturnType<typeof summarizeRounds>;
  bareSummary: ReturnType<typeof summarizeRounds>;
}

/** Both sets of rounds for one pair (ours, its bare server). */
async function measurePair(ours: BenchServer, bare: BenchServer): Promise<SetResult[]> {
  const ua = { userAgent: USER_AGENT };
  for (const s of [ours, bare]) {
    await warmUp(s, LINKS);
  }
  const results: SetResult[] = [];
  for (const set of SETS) {
    const rounds: RoundResult[] = await alternateRounds(
      `outside ${ours.name} ${set.rounds}×${set.seconds} s`,
      [ours, bare],
      LINKS,
      [ours.name, bare.name],
      { rounds: set.rounds, roundSeconds: set.seconds, waitForQuiet: WAIT_FOR_QUIET, ...ua },
    );
    const perRound = [];
    for (let r = 1; r <= set.rounds; r++) {
      const a = rounds.find((x) => x.server === ours.name && x.round === r)!;
      const b = rounds.find((x) => x.server === bare.name && x.round === r)!;
      perRound.push({ rps: a.rps / b.rps, p99: a.p99 / b.p99 });
    }
    results.push({
      ...set,
      ours: ours.name,
      bare: bare.name,
      ratio: pairedRatios(rounds, ours.name, bare.name),
      perRound,
      oursSummary: summarizeRounds(rounds, ours.name),
      bareSummary: summarizeRounds(rounds, bare.name),
    });
  }
  return results;
}

export interface OutsideResult {
  sets: SetResult[];
  loadBefore: string;
  loadAfter: string;
  notes: string[];
}

/** Runs the phases; `ctx.dbName` is an empty migrated database the links are created in through the API. */
export async function benchOutside(ctx: RunContext): Promise<OutsideResult> {
  const loadBefore = formatLoad();
  const sets: SetResult[] = [];
  const notes: string[] = [];
  const started: BenchServer[] = [];
  const stopAll = async () => {
    for (const s of started.splice(0)) await s.stop().catch(() => {});
  };
  try {
    // The links, made through the API of a `npm run web` on the run's database, then the bare servers' data.
    const web = await startNpmRunWeb('web', ctx.databaseUrl, {});
    started.push(web);
    await createLinks(web.url, QUIET_BOOTSTRAP_ENV.BOOTSTRAP_API_KEY, LINKS);
    for (let tries = 0; (await httpGet(`${web.url}/${CODE_PREFIX}1`)).status !== 301; tries++) {
      if (tries === 50) throw new Error(`web: /${CODE_PREFIX}1 never answered 301 after its creation`);
      await sleep(100);
    }
    const count = await writeLinksFile(ctx.dbName, ctx.linksFile);
    say(`outside: ${count} links in the links file`);
    const bareMap = (await startContestant('bare-map', SPEC, ctx))!;
    started.push(bareMap);

    if (PHASES.includes('web')) sets.push(...(await measurePair(web, bareMap)));
    await web.stop();
    started.splice(started.indexOf(web), 1);
    for (let instance = 2; PHASES.includes('web') && instance <= WEB_INSTANCES; instance++) {
      const again = await startNpmRunWeb(`web#${instance}`, ctx.databaseUrl, {});
      started.push(again);
      sets.push(...(await measurePair(again, bareMap)));
      await again.stop();
      started.splice(started.indexOf(again), 1);
    }

    if (PHASES.includes('npm-start')) {
      const npmStart = await startNpmStart({
        dataDir: join(ctx.tmpDir, 'outside-npm-start'),
        env: {},
        codes: LINKS,
        asUser: true,
      });
      started.push(npmStart);
      notes.push(
        `npm start: quiet ${npmStart.settleSeconds.toFixed(0)} s after its links were made (the sync queue took ` +
          `them; ${npmStart.syncWorkflows} per-link sync workflows), before its rounds`,
      );
      sets.push(...(await measurePair(npmStart, bareMap)));
      await npmStart.stop();
      started.splice(started.indexOf(npmStart), 1);
    }

    if (PHASES.includes('store')) {
      // The records in the serving store's format under the bench's prefix, where the bare Redis server reads.
      await seedServingStore(ctx.dbName, REDIS_KEY_PREFIX, LINKS);
      const store = await startNpmRunWeb('web-store', ctx.databaseUrl, {
        REDIS_URL,
        REDIS_KEY_PREFIX,
        RESOLVER_CACHE_MAX: '0',
      });
      started.push(store);
      const bareRedis = (await startContestant('bare-redis', SPEC, ctx))!;
      started.push(bareRedis);
      sets.push(...(await measurePair(store, bareRedis)));
    }
  } finally {
    await stopAll();
  }
  return { sets, loadBefore, loadAfter: formatLoad(), notes };
}

const TITLES: Record<string, string> = {
  web: '`npm run web`, LRU hit',
  'npm-start': '`npm start` (embedded), LRU hit',
  'web-store': '`npm run web`, serving store (LRU off)',
};

/** The generated section: one row per pair and set. */
export function renderOutsideSection(r: OutsideResult): string {
  const rows = r.sets.map((s) => {
    const rounds = s.perRound.map((x) => x.rps.toFixed(2)).join(', ');
    const title = TITLES[s.ours.replace(/#\d+$/, '')] ?? s.ours;
    const instance = /#(\d+)$/.exec(s.ours)?.[1];
    return (
      `| ${title}${instance ? ` (process ${instance})` : ''} | ${s.bare} | ${s.rounds} × ${s.seconds} s | ` +
      `${Math.round(s.oursSummary.rps).toLocaleString('en')} | ${Math.round(s.bareSummary.rps).toLocaleString('en')} | ` +
      `**${toPercent(s.ratio.rps)}** (${rounds}) | ${toMs(s.oursSummary.p99)} / ${toMs(s.bareSummary.p99)} ms | ` +
      `${toTimes(s.ratio.p99)} | ${s.oursSummary.cpu.toFixed(1)} / ${s.bareSummary.cpu.toFixed(1)} |`
    );
  });
  return [
    ...describeMachine(),
    `- Load: wrk -t1 -c${CONNECTIONS}, ${LINKS.toLocaleString('en')} links made through the API, codes at random, ` +
      `${USER_AGENT ? 'a browser User-Agent' : 'no User-Agent'}, ` +
      `${WAIT_FOR_QUIET ? 'each round on a quiet machine' : 'no wait between rounds'}; load average ` +
      `${r.loadBefore} before, ${r.loadAfter} after`,
    ...r.notes.map((n) => `- ${n}`),
    '',
    '| ours | bare | rounds | ours req/s | bare req/s | ours ÷ bare (per round) | p99 ours / bare | p99 ÷ bare | CPU µs/req ours / bare |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}
