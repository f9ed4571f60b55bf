// Where results go: stdout always, and the generated sections of docs/BENCHMARKS.md (between
// <!-- bench:NAME --> markers) unless BENCH_NO_DOC=1.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { CONNECTIONS, DOC, NO_DOC, ROOT, ROUND_SECONDS, ROUNDS, say } from './bench_settings.ts';
import { getWrkVersion } from './run_wrk.ts';

/** The 1/5/15-minute load average, one decimal each. */
export function formatLoad(): string {
  return loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ');
}

/** Date, commit, machine and tool versions: the first lines of every section. */
export function describeMachine(): string[] {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {}
  return [
    `- Date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; commit ${commit}`,
    `- Machine: nproc ${cpus().length} (${cpus()[0]?.model ?? 'unknown CPU'}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM; ` +
      `Node ${process.version}; ${getWrkVersion()}`,
  ];
}

/** How the rounds were run, for the paths and compare sections. */
export function describeLoad(): string {
  return (
    `- Load: wrk -t1 -c${CONNECTIONS}, keep-alive, uniformly random codes (Lua), a browser User-Agent, loopback; ` +
    `${ROUNDS} rounds × ${ROUND_SECONDS} s per server per path, alternated, each round starting on a quiet machine ` +
    '(up to BENCH_QUIET_SECONDS waiting for it); req/s, p50 and p99 are medians over rounds. In the paths ' +
    'section ours and its baselines run back to back in every round (their order alternating, the other servers ' +
    "rotating after them) and each ratio is paired: the median over rounds of that round's ratio."
  );
}

/** Prints a generated section and, unless BENCH_NO_DOC=1, replaces it in docs/BENCHMARKS.md. */
export function emitSection(name: string, body: string): void {
  process.stdout.write(`\n<!-- bench:${name} -->\n${body}\n<!-- /bench:${name} -->\n`);
  if (NO_DOC) {
    say(`BENCH_NO_DOC=1: docs/BENCHMARKS.md left alone (the ${name} section is on stdout)`);
    return;
  }
  const doc = readFileSync(DOC, 'utf8');
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  if (a < 0 || b < a) throw new Error(`docs/BENCHMARKS.md lacks the ${start} … ${end} markers`);
  writeFileSync(DOC, `${doc.slice(0, a + start.length)}\n${body}\n${doc.slice(b)}`);
  formatDoc();
  say(`wrote the ${name} section of docs/BENCHMARKS.md`);
}

/** Appends one line to the run history (kept across runs, so a later noisy run never hides an earlier one). */
export function appendHistory(line: string): void {
  process.stdout.write(`\nhistory: ${line}\n`);
  if (NO_DOC) return;
  const doc = readFileSync(DOC, 'utf8');
  const end = '<!-- /bench:history -->';
  const at = doc.indexOf(end);
  if (at < 0) throw new Error(`docs/BENCHMARKS.md lacks the ${end} marker`);
  const start = doc.indexOf(HISTORY_START);
  if (start < 0 || start > at) throw new Error(`docs/BENCHMARKS.md lacks the ${HISTORY_START} marker`);
  // The latest runs only: the section is a short record of where the figures stand, not a diary (git keeps
  // every earlier line).
  const lines = [
    ...doc
      .slice(start + HISTORY_START.length, at)
      .split('\n')
      .filter((l) => l.startsWith('- ')),
    line,
  ];
  const kept = lines.slice(-HISTORY_KEPT).join('\n');
  writeFileSync(DOC, `${doc.slice(0, start + HISTORY_START.length)}\n${kept}\n${doc.slice(at)}`);
  formatDoc();
}

const HISTORY_START = '<!-- bench:history -->';
/** Run-history lines kept in docs/BENCHMARKS.md. */
const HISTORY_KEPT = 12;

/** The house formatter aligns Markdown tables; keep the file as `npx biome check .` wants it. */
function formatDoc(): void {
  execFileSync(join(ROOT, 'node_modules/.bin/biome'), ['format', '--write', DOC], { stdio: 'ignore' });
}

/** A ratio as a percentage with one decimal. */
export const toPercent = (x: number) => `${(x * 100).toFixed(1)}%`;
/** A ratio as "1.23×". */
export const toTimes = (x: number) => `${x.toFixed(2)}×`;
