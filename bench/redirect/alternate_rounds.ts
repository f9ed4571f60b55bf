// Warm-up and alternated wrk rounds over several servers (ABAB…, the first server rotating each round), with
// each server's CPU per request, context switches and RSS read from /proc around its round.

import { readFileSync } from 'node:fs';
import {
  type BenchServer,
  readCpuMicrosOf,
  readMinorFaultsOf,
  readRssMiBOf,
  readSwitches,
  servingPidsOf,
} from './bench_server.ts';
import { QUIET_SECONDS, ROUND_SECONDS, ROUNDS, say, sleep, WARMUP_SECONDS } from './bench_settings.ts';
import { countWrkErrors, runWrk } from './run_wrk.ts';

export interface RoundResult {
  server: string;
  round: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  rss: number;
  /** Server CPU (user + system) per request, µs: what decides throughput when the CPU is the limit. */
  cpuPerRequest: number;
}

export interface ServerSummary {
  /** Medians over rounds. */
  rps: number;
  p50: number;
  p99: number;
  cpu: number;
  errors: number;
  /** Largest RSS seen after a round. */
  rss: number;
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Seconds of the first in-order pass (BENCH_WARMUP_SECONDS, or enough for every code at 2,000 req/s). */
function toWarmupSeconds(codes: number): number {
  return WARMUP_SECONDS ?? Math.max(3, Math.ceil(codes / 2000));
}

/** One wrk run for the warm-up; returns the responses wrk completed. */
export type WarmupRun = (seconds: number, order: 'seq' | 'random') => Promise<number>;

/**
 * A server that fills a cache gets every code in order first: the Lua script numbers requests across all
 * connections, so a run that completed at least `codes` requests has asked for every code. A slow filler
 * (npm start's PGlite lookups) gets longer runs until one does; a run that falls short still filled part of
 * the cache. Then every server gets 3 s at random (the JIT).
 */
export async function warmUp(server: BenchServer, codes: number, run?: WarmupRun): Promise<void> {
  const wrk: WarmupRun =
    run ?? (async (seconds, order) => (await runWrk(server.url, seconds, { codes, order })).requests);
  if (server.fillsCache) {
    let seconds = toWarmupSeconds(codes);
    for (let pass = 1; ; pass++) {
      const requests = await wrk(seconds, 'seq');
      if (requests >= codes) break;
      if (pass === 6)
        throw new Error(`${server.name}: ${pass} in-order passes never reached all ${codes} codes`);
      say(
        `${server.name}: the in-order warm-up reached ${requests} of ${codes} codes in ${seconds} s; again, longer`,
      );
      seconds *= 2;
    }
    await sleep(500);
  }
  await wrk(3, 'random');
}

/** Busy and total CPU time of the whole machine so far (jiffies, /proc/stat's first line). */
function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8')
    .split('\n', 1)[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  // idle and iowait are the 4th and 5th fields.
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

/** Share of the machine's CPU busy below which it counts as quiet (2 cores: 0.1 = a fifth of one core). */
const QUIET_SHARE = 0.1;

/**
 * Waits until the machine has been quiet for one 500 ms sample (at most QUIET_SECONDS); how long it waited and
 * how busy it was when it gave up are returned for the log.
 */
export async function waitForQuiet(): Promise<{ waitedMs: number; busy: number }> {
  const started = Date.now();
  let busy = 1;
  while (Date.now() - started < QUIET_SECONDS * 1000) {
    const a = machineCpu();
    await sleep(500);
    const b = machineCpu();
    busy = (b.busy - a.busy) / Math.max(1, b.total - a.total);
    if (busy < QUIET_SHARE) break;
  }
  return { waitedMs: Date.now() - started, busy };
}

/** `ROUNDS` rounds of `ROUND_SECONDS` per server, alternated; every round is logged as it ends. */
export async function alternateRounds(
  label: string,
  servers: BenchServer[],
  codes: number,
  /**
   * Servers measured back to back in every round (ours and its baselines), in alternating order round by round;
   * the others follow, rotating. On this machine the speed of every server drifts between rounds (the same
   * server's CPU per request moved 17 → 34 µs from one round to the next), so a ratio is only as good as the
   * time between its two measurements.
   */
  adjacent: string[] = [],
  /**
   * The outside mode's own settings: its number and length of rounds, its requests' User-Agent, and no wait for a
   * quiet machine before a round (an outside harness does not wait).
   */
  options: { rounds?: number; roundSeconds?: number; userAgent?: string; waitForQuiet?: boolean } = {},
): Promise<RoundResult[]> {
  const rounds: RoundResult[] = [];
  const roundCount = options.rounds ?? ROUNDS;
  const roundSeconds = options.roundSeconds ?? ROUND_SECONDS;
  const noWait = { waitedMs: 0, busy: 0 };
  const group = adjacent
    .map((name) => servers.find((s) => s.name === name))
    .filter((s): s is BenchServer => s !== undefined);
  const rest = servers.filter((s) => !group.includes(s));
  for (let round = 1; round <= roundCount; round++) {
    // Rotate which server goes first, so none always follows another's garbage or cache state.
    const rotated = rest.map((_, i) => rest[(i + round - 1) % rest.length]!);
    const order = [...(round % 2 === 1 ? group : [...group].reverse()), ...rotated];
    for (const s of order) {
      // Several serving processes (WEB_CONCURRENCY > 1): CPU, switches and RSS summed over them.
      const pids = servingPidsOf(s);
      const quiet = options.waitForQuiet === false ? noWait : await waitForQuiet();
      const cpuBefore = readCpuMicrosOf(pids);
      const switchesBefore = sumSwitches(pids);
      const faultsBefore = readMinorFaultsOf(pids);
      const machineBefore = machineCpu();
      const r = await runWrk(s.url, roundSeconds, {
        codes,
        order: 'random',
        ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
      });
      const machineAfter = machineCpu();
      const cpuAfter = readCpuMicrosOf(pids);
      const switchesAfter = sumSwitches(pids);
      const faultsAfter = readMinorFaultsOf(pids);
      const perK = (n: number) => ((n * 1000) / r.requests).toFixed(1);
      // The whole machine's busy CPU (server, wrk, Postgres or Redis, everything else) per request: /proc/stat
      // counts in USER_HZ ticks (100 a second on Linux), so a tick is 10,000 µs.
      const machinePerRequest = ((machineAfter.busy - machineBefore.busy) * 10_000) / r.requests;
      const userPerRequest = (cpuAfter.user - cpuBefore.user) / r.requests;
      const systemPerRequest = (cpuAfter.system - cpuBefore.system) / r.requests;
      const result: RoundResult = {
        server: s.name,
        round,
        rps: r.rps,
        p50: r.p50_us,
        p99: r.p99_us,
        errors: countWrkErrors(r),
        rss: readRssMiBOf(pids),
        cpuPerRequest: userPerRequest + systemPerRequest,
      };
      rounds.push(result);
      say(
        `${label} round ${round} ${s.name}: ${Math.round(r.rps)} req/s, p50 ${toMs(r.p50_us)} ms, ` +
          `p99 ${toMs(r.p99_us)} ms, CPU ${result.cpuPerRequest.toFixed(1)} µs/req ` +
          `(user ${userPerRequest.toFixed(1)}, kernel ${systemPerRequest.toFixed(1)}; whole machine ` +
          `${machinePerRequest.toFixed(1)}), switches per 1k req: ` +
          `slept ${perK(switchesAfter.slept - switchesBefore.slept)}, ` +
          `preempted ${perK(switchesAfter.preempted - switchesBefore.preempted)}, page faults ` +
          `${perK(faultsAfter - faultsBefore)}, errors ${result.errors}, ` +
          `RSS ${result.rss} MiB; waited ${(quiet.waitedMs / 1000).toFixed(1)} s for quiet ` +
          `(${Math.round(quiet.busy * 100)}% busy${quiet.busy < QUIET_SHARE ? '' : ', gave up'})`,
      );
    }
  }
  return rounds;
}

function sumSwitches(pids: number[]): { slept: number; preempted: number } {
  let slept = 0;
  let preempted = 0;
  for (const pid of pids) {
    const s = readSwitches(pid);
    slept += s.slept;
    preempted += s.preempted;
  }
  return { slept, preempted };
}

/** One server's medians over its rounds. */
/**
 * The median over rounds of `server`'s figure divided by `baseline`'s in the same round (req/s and p99): the
 * paired ratio, which the drift between rounds does not move the way a ratio of two medians is moved.
 */
export function pairedRatios(
  rounds: RoundResult[],
  server: string,
  baseline: string,
): { rps: number; p99: number } {
  const rps: number[] = [];
  const p99: number[] = [];
  for (const r of rounds) {
    if (r.server !== server) continue;
    const b = rounds.find((x) => x.server === baseline && x.round === r.round);
    if (!b) continue;
    rps.push(r.rps / b.rps);
    p99.push(r.p99 / b.p99);
  }
  return { rps: median(rps), p99: median(p99) };
}

export function summarizeRounds(rounds: RoundResult[], server: string): ServerSummary {
  const mine = rounds.filter((r) => r.server === server);
  return {
    rps: median(mine.map((r) => r.rps)),
    p50: median(mine.map((r) => r.p50)),
    p99: median(mine.map((r) => r.p99)),
    cpu: median(mine.map((r) => r.cpuPerRequest)),
    errors: mine.reduce((n, r) => n + r.errors, 0),
    rss: Math.max(...mine.map((r) => r.rss)),
  };
}

/** µs → ms with two decimals. */
export const toMs = (us: number) => (us / 1000).toFixed(2);
