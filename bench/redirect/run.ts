import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  addBenchLinks,
  benchDatabaseHolds,
  clearBenchRedis,
  createBenchDatabase,
  dropBenchDatabase,
  writeLinksFile,
} from './bench_data.ts';
import { appendHistory, emitSection, formatLoad } from './bench_report.ts';
import {
  ARCHIVE_DATABASE,
  DATABASE_URL,
  DB_NAME,
  KEEP_DATABASE,
  OURS_B_ROOT,
  REDIS_KEY_PREFIX,
  ROOT,
  ROUND_SECONDS,
  ROUNDS,
  say,
  toDatabaseUrl,
} from './bench_settings.ts';
import { compareOnPath, describeCompareResult, renderCompareSection } from './compare_mode.ts';
import { benchLong, renderLongSection } from './long_mode.ts';
import { benchMemory, renderMemorySection } from './memory_mode.ts';
import { benchOutside, renderOutsideSection } from './outside_mode.ts';
import { benchPath, describePathResult, renderHistoryLine, renderPathsSection } from './paths_mode.ts';
import { profileLru } from './profile_mode.ts';
import { type ContestantName, findPath, OPT_IN_PATHS, PATHS } from './redirect_paths.ts';
import { benchRest } from './rest_mode.ts';
import { benchScale, describeScaleResult, renderScaleSection } from './scale_mode.ts';
import { benchStampede, renderStampedeSection } from './stampede_mode.ts';
import type { RunContext } from './start_contestant.ts';

const MODES = [
  'all',
  'paths',
  'stampede',
  'memory',
  'profile',
  'long',
  'compare',
  'scale',
  'rest',
  'outside',
];
const B_DB_NAME = 'lifeline_bench_b';

// ------------------------------------------------------------------------------------------------ main

async function runPaths(ctx: RunContext): Promise<boolean> {
  const loadBefore = formatLoad();
  say(`load average before: ${loadBefore}`);
  // BENCH_PATHS=lru (comma list of path keys) measures some paths only, for iterating; the doc is then left alone.
  const only = process.env.BENCH_PATHS?.split(',').filter(Boolean);
  const results = [];
  // Opt-in paths (lru_rules) run only when named.
  for (const spec of only ? [...PATHS, ...OPT_IN_PATHS].filter((p) => only.includes(p.key)) : PATHS)
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
    // The outside mode makes its few links through the API: its database starts empty.
    const links = mode === 'memory' ? 1_000_000 : mode === 'outside' ? 0 : 100_000;
    if (ARCHIVE_DATABASE) {
      if (mode !== 'paths') throw new Error('BENCH_ARCHIVE_DATABASE works with paths mode only');
      await addBenchLinks(DB_NAME, links);
    } else if (KEEP_DATABASE && (await benchDatabaseHolds(DB_NAME, links)))
      say(`reusing ${DB_NAME} (BENCH_KEEP_DATABASE)`);
    else await createBenchDatabase(DB_NAME, links);
    if (ctx.oursB) await createBenchDatabase(ctx.oursB.dbName, links);
    if (mode !== 'outside') say(`links file: ${await writeLinksFile(DB_NAME, ctx.linksFile)} links`);
    if (mode === 'outside') {
      if (ARCHIVE_DATABASE || KEEP_DATABASE) throw new Error('the outside mode makes its own database');
      emitSection('outside', renderOutsideSection(await benchOutside(ctx)));
    } else if (mode === 'profile') {
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
    if (!KEEP_DATABASE && !ARCHIVE_DATABASE) await dropBenchDatabase(DB_NAME).catch(() => {});
    if (ctx.oursB) await dropBenchDatabase(ctx.oursB.dbName).catch(() => {});
    rmSync(tmpDir, { recursive: true, force: true });
  }
  say(`done in ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${formatLoad()}`);
  process.exitCode = failed ? 1 : 0;
}

await main();
