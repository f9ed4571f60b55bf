// Redirect benchmark: our production entry (main.ts) against the simplest servers that do the
// job (DESIGN.md), each in its own process, alternated round by round on loopback with wrk. Every figure is a
// ratio against the same run's bare node:http + Map server (bench/redirect/bare_map_server.ts), and per path
// against the bare server doing the same lookup (bare_redis_server.ts, bare_postgres_server.ts). Extra lines:
// bare-resolver (our resolver in a bare server, bare_server.ts), hono-only (main.ts without the fast path),
// nginx (map + return 301: the ceiling) and npm start (the embedded default) on the LRU path.
//
//   npm run bench:redirect                    three paths + stampede
//   npm run bench:redirect -- paths           only the three paths
//   npm run bench:redirect -- stampede        only the stampede check (1,000 concurrent misses, one query)
//   npm run bench:redirect -- memory          1,000,000 links, random codes for minutes, RSS every 10 s
//   npm run bench:redirect -- long [lru|store|postgres]   ours alone, BENCH_LONG_SECONDS per path (all three
//                                             without an argument): throughput and RSS per minute, and the
//                                             human clicks recorded against the redirects wrk completed
//   BENCH_OURS_B_ROOT=/other/checkout npm run bench:redirect -- compare
//                                             ours (A, this checkout) and ours from the other checkout (B) with
//                                             bare Map, alternated over the three paths: B ÷ A per path
//   npm run bench:redirect -- profile [ours|bare|bare-resolver|bare-redis|bare-postgres|npm-start] [lru|store|postgres]
//                                             one server under one path's load (default: ours, LRU hit),
//                                             node --cpu-prof (BENCH_PROFILER=perf: Linux perf record; =deopt:
//                                             --trace-deopt; =gc: --trace-gc-nvp, summarised per request;
//                                             =promoted: what survived the young generation, by allocation site)
//   npm run bench:redirect -- rest [ours|bare-map|…] [lru|store|postgres]
//                                             one server, BENCH_ROUNDS load windows with BENCH_REST_SECONDS (60)
//                                             of idle between them: is it slower after an idle spell?
//                                             (BENCH_PROFILER=cpu: under --cpu-prof)
//   npm run bench:redirect -- scale           LRU hit: ours with one web process, ours with WEB_CONCURRENCY=2
//                                             and bare Map, alternated (CPU and RSS summed over web processes)
//
// Knobs (environment): BENCH_ROUNDS (4), BENCH_ROUND_SECONDS (20), BENCH_CONNECTIONS (50), BENCH_QUIET_SECONDS (20: the most a round waits for the machine to go quiet first),
// BENCH_WARMUP_SECONDS (the in-order warm-up pass; default: enough to request every code once),
// BENCH_PATHS (comma list of lru,serving_store,postgres: only those, the doc is left alone; compare honours it too),
// BENCH_LONG_SECONDS (600), BENCH_LONG_SAMPLE_SECONDS (60: one "minute" of the long mode), BENCH_LONG_CODES
// (codes the long mode requests instead of the path's own number, e.g. 100000 on the LRU path),
// BENCH_MEMORY_SECONDS (240), BENCH_SERVER_NODE_OPTIONS (the memory run's server, e.g. --max-old-space-size=256),
// BENCH_NPM_START=0 (leave the npm start row out), BENCH_NPM_START_SETTLE_SECONDS (900),
// BENCH_NGINX (/usr/sbin/nginx; the row is skipped with a message when it is missing),
// BENCH_OURS_B_ROOT (compare mode), BENCH_OURS_ENV (NAME=value,… added to our servers' environment, the profile mode's ours too: experiments), BENCH_OURS_B_ENV (the same, ours B only), BENCH_NO_DOC=1 (results on stdout only; docs/BENCHMARKS.md untouched),
// BENCH_ADMIN_URL (Postgres admin URL; default as the tests' harness), BENCH_REDIS_URL
// (redis://127.0.0.1:6379/7: a database index of its own, so the shared db 0 is untouched; keys are also
// prefixed lifeline-bench: and deleted at the end by SCAN, never FLUSHDB).
//
// It creates (and at the end drops) its own databases (lifeline_bench; compare adds lifeline_bench_b), migrated
// with lib/stores/migrate.ts, keeps its files (links file, nginx prefix, npm start's data) in a temp dir it
// removes, and rewrites the generated sections of docs/BENCHMARKS.md (between <!-- bench:NAME --> markers).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import postgres from 'postgres';
import { warmUp } from './alternate_rounds.ts';
import {
  clearBenchRedis,
  createBenchDatabase,
  dropBenchDatabase,
  seedServingStore,
  writeLinksFile,
} from './bench_data.ts';
import { appendHistory, describeMachine, emitSection, formatLoad } from './bench_report.ts';
import { type BenchServer, startNodeServer } from './bench_server.ts';
import {
  CONNECTIONS,
  DATABASE_URL,
  DB_NAME,
  MEMORY_SECONDS,
  OURS_B_ROOT,
  REDIS_KEY_PREFIX,
  REDIS_URL,
  ROOT,
  ROUND_SECONDS,
  ROUNDS,
  say,
  sleep,
  toDatabaseUrl,
} from './bench_settings.ts';
import { compareOnPath, describeCompareResult, renderCompareSection } from './compare_mode.ts';
import { summarizeGcTrace } from './gc_trace.ts';
import { benchLong, renderLongSection } from './long_mode.ts';
import { startNpmStart } from './npm_start_server.ts';
import { benchPath, describePathResult, renderHistoryLine, renderPathsSection } from './paths_mode.ts';
import { diffCounts, readOurCounters, readOurMemory } from './read_our_metrics.ts';
import { type ContestantName, findPath, PATHS, withoutEmpty } from './redirect_paths.ts';
import { benchRest } from './rest_mode.ts';
import { runWrk } from './run_wrk.ts';
import { benchScale, describeScaleResult, renderScaleSection } from './scale_mode.ts';
import { OURS_EXTRA_ENV, QUIET_BOOTSTRAP_ENV, type RunContext } from './start_contestant.ts';

const MODES = ['all', 'paths', 'stampede', 'memory', 'profile', 'long', 'compare', 'scale', 'rest'];
const B_DB_NAME = 'lifeline_bench_b';

// -------------------------------------------------------------------------------------------- stampede

/** Opens `n` sockets, then sends one GET for `path` on each in the same tick; returns the status codes. */
async function concurrentGets(port: number, path: string, n: number): Promise<number[]> {
  const sockets: Socket[] = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const s = connect(port, '127.0.0.1', () => resolve(s));
          s.once('error', reject);
        }),
    ),
  );
  const answers = sockets.map(
    (s) =>
      new Promise<number>((resolve) => {
        let text = '';
        s.on('data', (c: Buffer) => {
          text += c.toString('latin1');
        });
        s.on('close', () => resolve(Number(text.slice(9, 12)) || 0));
        s.on('error', () => resolve(0));
      }),
  );
  const req = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
  for (const s of sockets) s.write(req);
  return Promise.all(answers);
}

function startOurs(env: Record<string, string>, nodeArgs: string[] = []): Promise<BenchServer> {
  return startNodeServer({
    name: 'ours',
    entry: 'main.ts',
    env: { ...QUIET_BOOTSTRAP_ENV, ...env },
    databaseUrl: DATABASE_URL,
    fillsCache: true,
    ours: true,
    nodeArgs,
  });
}

async function benchStampede() {
  say('— stampede: 1,000 concurrent requests for one uncached code (LRU on, serving store on)');
  const code = `stampede${Date.now().toString(36)}`;
  const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  await sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    VALUES (${code}, 'https://news.example.com/stampede', 'active', 'clean', 'import', 'bench')`;
  await sql.end();
  const ours = await startOurs({ REDIS_URL, REDIS_KEY_PREFIX });
  try {
    const before = await readOurCounters(ours);
    const statuses = await concurrentGets(ours.port, `/${code}`, 1000);
    await sleep(300);
    const layers = diffCounts((await readOurCounters(ours)).lookups, before.lookups);
    const postgresQueries = Object.entries(layers)
      .filter(([k]) => k.startsWith('postgres/'))
      .reduce((n, [, v]) => n + v, 0);
    const redirected = statuses.filter((s) => s === 301).length;
    say(
      `stampede: ${redirected}/1000 answered 301; Postgres lookups ${postgresQueries}; ${JSON.stringify(layers)}`,
    );
    return { code, redirected, postgresQueries, layers, pass: postgresQueries === 1 && redirected === 1000 };
  } finally {
    await ours.stop();
  }
}

function renderStampedeSection(r: Awaited<ReturnType<typeof benchStampede>>): string {
  return [
    `- Date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}`,
    `- 1,000 sockets opened first, then one \`GET /${r.code}\` written on each in the same tick (code never requested before; LRU and serving store on).`,
    `- Answered 301: ${r.redirected} / 1000. Postgres lookups (lifeline_link_lookups_total{layer="postgres"} delta): **${r.postgresQueries}**.`,
    `- All lookup counters that moved: \`${JSON.stringify(r.layers)}\``,
    `- Result: ${r.pass ? 'PASS (one Postgres query)' : 'FAIL (expected exactly one Postgres query and 1000 redirects)'}`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------- memory

async function benchMemory(links: number) {
  say(`— memory: ${links.toLocaleString('en')} links, random codes for ${MEMORY_SECONDS} s, RSS every 10 s`);
  // BENCH_SERVER_NODE_OPTIONS (e.g. --max-old-space-size=256): what a deployment that caps the heap would see.
  const nodeOptions = process.env.BENCH_SERVER_NODE_OPTIONS;
  const ours = await startOurs(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {});
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
    const errors = r.non_3xx + r.socketErrors;
    say(`memory: ${Math.round(r.rps)} req/s, ${r.requests} requests, errors ${errors}`);
    series.sort((a, b) => a.t - b.t);
    return { links, series, requests: r.requests, rps: r.rps, errors, layers };
  } finally {
    await ours.stop();
  }
}

function renderMemorySection(r: Awaited<ReturnType<typeof benchMemory>>): string {
  const peak = Math.max(...r.series.map((s) => s.rss));
  const tail = r.series.slice(-Math.max(3, Math.floor(r.series.length / 3)));
  const tailSpread = Math.max(...tail.map((s) => s.rss)) - Math.min(...tail.map((s) => s.rss));
  const nodeOptions = process.env.BENCH_SERVER_NODE_OPTIONS;
  return [
    ...describeMachine(),
    `- ${r.links.toLocaleString('en')} links in Postgres; wrk -t1 -c${CONNECTIONS} requesting uniformly random codes for ${MEMORY_SECONDS} s (${r.requests.toLocaleString('en')} requests, ${Math.round(r.rps)} req/s, ${r.errors} errors); default LRU settings${nodeOptions ? `; server NODE_OPTIONS=${nodeOptions}` : ''}.`,
    `- RSS of our server: start ${r.series[0]!.rss} MiB, peak ${peak} MiB, last third within ${tailSpread.toFixed(1)} MiB (last ${r.series.at(-1)!.rss} MiB).`,
    `- V8 heap at the end: ${r.series.at(-1)!.heapUsed} MiB used of ${r.series.at(-1)!.heapTotal} MiB reserved (the rest of the RSS: code, native buffers and memory the allocator keeps).`,
    `- Lookup counters at the end: \`${JSON.stringify(r.layers)}\``,
    '',
    `| t (s) | ${r.series.map((s) => s.t).join(' | ')} |`,
    `|---|${r.series.map(() => '---:').join('|')}|`,
    `| RSS (MiB) | ${r.series.map((s) => s.rss).join(' | ')} |`,
    `| V8 heap used (MiB) | ${r.series.map((s) => s.heapUsed).join(' | ')} |`,
    `| V8 heap reserved (MiB) | ${r.series.map((s) => s.heapTotal).join(' | ')} |`,
  ].join('\n');
}

// --------------------------------------------------------------------------------------------- profile

const PROFILE_ENTRIES: Record<string, string> = {
  ours: 'main.ts',
  bare: 'bench/redirect/bare_map_server.ts',
  'bare-resolver': 'bench/redirect/bare_server.ts',
  'bare-redis': 'bench/redirect/bare_redis_server.ts',
  'bare-postgres': 'bench/redirect/bare_postgres_server.ts',
};

/**
 * A server under one path's load (LRU hit unless named) with `node --cpu-prof`; the profile lands in
 * .cache/cpu-profiles/<which>/ (<which>-<path>/ for the other paths).
 * With BENCH_PROFILER=perf, Linux `perf record` samples the whole process instead (native code, the kernel's
 * socket work and GC included; JS frames named through --perf-basic-prof): .cache/cpu-profiles/<which>/perf.data,
 * read with `perf report -i <file> --no-children --sort sym`. BENCH_PROFILER=deopt: V8's deoptimisations
 * (--trace-deopt) to .cache/cpu-profiles/<which>/deopt.log, to find code that keeps falling back.
 * BENCH_PROFILER=gc: every collection (--trace-gc-nvp) to .cache/cpu-profiles/<which>/gc.log, to see what the
 * scavenger and the mark-compactor cost a path (summarised at the end). BENCH_PROFILER=promoted: V8's sampling heap
 * profiler keeping only what survived the young generation (bench/redirect/promoted_sampler.ts), by allocation
 * site, to .cache/cpu-profiles/<which>/promoted.heapprofile (read with summarize_heap_profile.ts).
 */
async function profileLru(which: string, ctx: RunContext, pathName = 'lru'): Promise<string> {
  const entry = PROFILE_ENTRIES[which];
  if (!entry && which !== 'npm-start')
    throw new Error(`profile what? ${[...Object.keys(PROFILE_ENTRIES), 'npm-start'].join(' | ')}`);
  const spec = findPath(pathName);
  if (spec.key === 'serving_store') await seedServingStore(ctx.dbName, REDIS_KEY_PREFIX, spec.codes);
  const dir = join(ROOT, '.cache/cpu-profiles', spec.key === 'lru' ? which : `${which}-${spec.key}`);
  mkdirSync(dir, { recursive: true });
  // npm start's web process is a child of its supervisor: sampled with perf (by its pid), never --cpu-prof.
  const usePerf = process.env.BENCH_PROFILER === 'perf' || which === 'npm-start';
  const traceDeopt = process.env.BENCH_PROFILER === 'deopt';
  const traceGc = process.env.BENCH_PROFILER === 'gc';
  const tracePromoted = process.env.BENCH_PROFILER === 'promoted';
  const promotedFile = join(dir, 'promoted.heapprofile');
  const traceFile = traceDeopt ? join(dir, 'deopt.log') : traceGc ? join(dir, 'gc.log') : undefined;
  const server = entry
    ? await startNodeServer({
        name: which,
        entry,
        env: {
          ...QUIET_BOOTSTRAP_ENV,
          ...withoutEmpty(spec.env),
          ...(which === 'ours' ? OURS_EXTRA_ENV : {}),
          BENCH_LINKS_FILE: ctx.linksFile,
          ...(tracePromoted ? { BENCH_PROMOTED_FILE: promotedFile } : {}),
        },
        databaseUrl: DATABASE_URL,
        fillsCache: which === 'ours' || which === 'bare-resolver',
        ours: which === 'ours',
        nodeArgs: usePerf
          ? ['--perf-basic-prof']
          : traceDeopt
            ? ['--trace-deopt']
            : traceGc
              ? ['--trace-gc-nvp']
              : tracePromoted
                ? ['--import', join(ROOT, 'bench/redirect/promoted_sampler.ts')]
                : ['--cpu-prof', `--cpu-prof-dir=${dir}`],
        ...(traceFile ? { stdoutFile: traceFile } : {}),
      })
    : await startNpmStart({
        dataDir: join(ctx.tmpDir, 'npm-start-data'),
        env: { ...withoutEmpty(spec.env), NODE_OPTIONS: '--perf-basic-prof' },
        codes: spec.codes,
      });
  const profiled = server.servingPids?.()[0] ?? server.pid;
  try {
    await warmUp(server, spec.codes);
    // The promoted-allocation sampler starts now, after the warm-up (see promoted_sampler.ts).
    if (tracePromoted) process.kill(profiled, 'SIGUSR2');
    const perf = usePerf
      ? spawn(
          'perf',
          ['record', '-F', '499', '-g', '-p', String(profiled), '-o', join(dir, 'perf.data'), '--'].concat(
            'sleep',
            String(ROUND_SECONDS),
          ),
          { stdio: 'ignore' },
        )
      : undefined;
    const r = await runWrk(server.url, ROUND_SECONDS, { codes: spec.codes, order: 'random' });
    if (perf && perf.exitCode === null) await new Promise((resolve) => perf.once('exit', resolve));
    say(
      `profile: ${Math.round(r.rps)} req/s under ${usePerf ? 'perf' : traceDeopt ? '--trace-deopt' : traceGc ? '--trace-gc-nvp' : tracePromoted ? 'the promoted-allocation sampler' : '--cpu-prof'}; ` +
        `${r.requests} measured requests (the profile also holds the warm-up)`,
    );
    if (traceGc && traceFile)
      say(`profile: ${summarizeGcTrace(traceFile, r.requests, ROUND_SECONDS * 1000)}`);
    if (tracePromoted)
      say(
        `profile: read with npx tsx bench/redirect/summarize_heap_profile.ts ${promotedFile} 30 ${r.requests}`,
      );
  } finally {
    await server.stop();
  }
  return dir;
}

// ------------------------------------------------------------------------------------------------ main

async function runPaths(ctx: RunContext): Promise<boolean> {
  const loadBefore = formatLoad();
  say(`load average before: ${loadBefore}`);
  // BENCH_PATHS=lru (comma list of path keys) measures some paths only, for iterating; the doc is then left alone.
  const only = process.env.BENCH_PATHS?.split(',').filter(Boolean);
  const results = [];
  for (const spec of PATHS.filter((p) => !only || only.includes(p.key)))
    results.push(await benchPath(spec, ctx));
  const loadAfter = formatLoad();
  say(`load average after: ${loadAfter}`);
  for (const r of results) say(describePathResult(r));
  if (only) {
    process.stdout.write(`${renderPathsSection(results, loadBefore, loadAfter)}\n`);
  } else {
    emitSection('paths', renderPathsSection(results, loadBefore, loadAfter));
    appendHistory(renderHistoryLine(results, loadBefore, loadAfter, `${ROUNDS}×${ROUND_SECONDS} s`));
  }
  return results.every((r) => r.pass);
}

async function runLong(ctx: RunContext, which: string | undefined): Promise<boolean> {
  const specs = which ? [findPath(which)] : PATHS;
  let pass = true;
  for (const spec of specs) {
    const r = await benchLong(spec, ctx);
    emitSection(`long-${spec.key}`, renderLongSection(r));
    pass &&= r.throughputPass && r.clicksPass && r.errors === 0;
  }
  return pass;
}

async function runCompare(ctx: RunContext): Promise<void> {
  // BENCH_PATHS works here too: a partial comparison prints its section and leaves the doc alone.
  const only = process.env.BENCH_PATHS?.split(',').filter(Boolean);
  const results = [];
  for (const spec of PATHS.filter((p) => !only || only.includes(p.key))) {
    const r = await compareOnPath(spec, ctx);
    results.push(r);
    say(describeCompareResult(r));
  }
  for (const r of results) process.stdout.write(`${describeCompareResult(r)}\n`);
  const section = renderCompareSection(results, ROOT, ctx.oursB!.root);
  if (only) process.stdout.write(`${section}\n`);
  else emitSection('compare', section);
}

/** The `compare` mode's other checkout, checked before anything is created. */
function readOursBRoot(): string {
  if (!OURS_B_ROOT) throw new Error('compare needs BENCH_OURS_B_ROOT=/path/to/another/checkout');
  const root = resolve(OURS_B_ROOT);
  for (const needed of ['main.ts', 'node_modules/tsx'])
    if (!existsSync(join(root, needed)))
      throw new Error(`BENCH_OURS_B_ROOT=${root} has no ${needed} (a checkout with npm install done?)`);
  return root;
}

async function main() {
  const mode = process.argv[2] ?? 'all';
  const arg = process.argv[3];
  if (!MODES.includes(mode)) throw new Error(`unknown mode "${mode}" (${MODES.join(' | ')})`);
  if (mode === 'long' && arg) findPath(arg);
  const bRoot = mode === 'compare' ? readOursBRoot() : undefined;
  const started = Date.now();
  const tmpDir = mkdtempSync(join(tmpdir(), 'lifeline-bench-'));
  const ctx: RunContext = {
    dbName: DB_NAME,
    databaseUrl: DATABASE_URL,
    linksFile: join(tmpDir, 'links.tsv'),
    tmpDir,
    ...(bRoot
      ? {
          oursB: {
            root: bRoot,
            dbName: B_DB_NAME,
            databaseUrl: toDatabaseUrl(B_DB_NAME),
            redisKeyPrefix: `${REDIS_KEY_PREFIX}b:`,
          },
        }
      : {}),
  };
  let failed = false;
  try {
    await clearBenchRedis();
    const links = mode === 'memory' ? 1_000_000 : 100_000;
    await createBenchDatabase(DB_NAME, links);
    if (ctx.oursB) await createBenchDatabase(ctx.oursB.dbName, links);
    say(`links file: ${await writeLinksFile(DB_NAME, ctx.linksFile)} links`);
    if (mode === 'profile') {
      say(`CPU profile written under ${await profileLru(arg ?? 'ours', ctx, process.argv[4])}`);
    } else if (mode === 'memory') {
      emitSection('memory', renderMemorySection(await benchMemory(links)));
    } else if (mode === 'long') {
      failed = !(await runLong(ctx, arg));
    } else if (mode === 'compare') {
      await runCompare(ctx);
    } else if (mode === 'rest') {
      await benchRest((arg ?? 'ours') as ContestantName, findPath(process.argv[4] ?? 'lru'), ctx);
    } else if (mode === 'scale') {
      const r = await benchScale(ctx, cpus().length);
      say(describeScaleResult(r));
      emitSection('scale', renderScaleSection(r));
    } else {
      if (mode === 'all' || mode === 'paths') failed ||= !(await runPaths(ctx));
      if (mode === 'all' || mode === 'stampede') {
        const s = await benchStampede();
        emitSection('stampede', renderStampedeSection(s));
        failed ||= !s.pass;
      }
    }
  } finally {
    await clearBenchRedis().catch(() => {});
    await dropBenchDatabase(DB_NAME).catch(() => {});
    if (ctx.oursB) await dropBenchDatabase(ctx.oursB.dbName).catch(() => {});
    rmSync(tmpDir, { recursive: true, force: true });
  }
  say(`done in ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${formatLoad()}`);
  process.exitCode = failed ? 1 : 0;
}

await main();
