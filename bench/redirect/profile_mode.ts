// The profile mode: one server under one path's load, under --cpu-prof, perf, or one of V8's traces.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { warmUp } from './alternate_rounds.ts';
import { seedServingStore } from './bench_data.ts';
import { startNodeServer } from './bench_server.ts';
import { DATABASE_URL, REDIS_KEY_PREFIX, ROOT, ROUND_SECONDS, say } from './bench_settings.ts';
import { summarizeGcTrace } from './gc_trace.ts';
import { startNpmStart } from './npm_start_server.ts';
import { findPath, withoutEmpty } from './redirect_paths.ts';
import { runWrk } from './run_wrk.ts';
import { OURS_EXTRA_ENV, QUIET_BOOTSTRAP_ENV, type RunContext } from './start_contestant.ts';

const PROFILE_ENTRIES: Record<string, string> = {
  ours: 'main.ts',
  bare: 'bench/redirect/bare_map_server.ts',
  'bare-resolver': 'bench/redirect/bare_server.ts',
  'bare-redis': 'bench/redirect/bare_redis_server.ts',
  // The same bare server with node-redis's per-command timeout off (as ours reads).
  'bare-redis-no-timeout': 'bench/redirect/bare_redis_server.ts',
  'bare-postgres': 'bench/redirect/bare_postgres_server.ts',
};

/**
 * BENCH_PROFILE_NODE_FLAGS: Node and V8 flags added after the server's own (so they win), e.g.
 * `--max-old-space-size=4096` to see what the web tier's memory flags cost a path (say so beside any figure).
 */
const EXTRA_NODE_FLAGS = (process.env.BENCH_PROFILE_NODE_FLAGS ?? '').split(/\s+/).filter((f) => f !== '');

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
export async function profileLru(which: string, ctx: RunContext, pathName = 'lru'): Promise<string> {
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
          ...(which === 'bare-redis-no-timeout' ? { BARE_REDIS_COMMAND_TIMEOUT: '0' } : {}),
          BENCH_LINKS_FILE: ctx.linksFile,
          ...(tracePromoted ? { BENCH_PROMOTED_FILE: promotedFile } : {}),
        },
        databaseUrl: DATABASE_URL,
        fillsCache: which === 'ours' || which === 'bare-resolver',
        ours: which === 'ours',
        nodeArgs: [
          ...(usePerf
            ? ['--perf-basic-prof']
            : traceDeopt
              ? ['--trace-deopt']
              : traceGc
                ? ['--trace-gc-nvp']
                : tracePromoted
                  ? ['--import', join(ROOT, 'bench/redirect/promoted_sampler.ts')]
                  : ['--cpu-prof', `--cpu-prof-dir=${dir}`]),
          ...EXTRA_NODE_FLAGS,
        ],
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
