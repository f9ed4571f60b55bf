// Warm-up and alternated wrk rounds over several servers (ABAB…, the first server rotating each round), with
// each server's CPU per request, context switches and RSS read from /proc around its round.

import {
  type BenchServer,
  readCpuMicrosOf,
  readRssMiBOf,
  readSwitches,
  servingPidsOf,
} from './bench_server.ts';
import { ROUND_SECONDS, ROUNDS, say, sleep, WARMUP_SECONDS } from './bench_settings.ts';
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

/** `ROUNDS` rounds of `ROUND_SECONDS` per server, alternated; every round is logged as it ends. */
export async function alternateRounds(
  label: string,
  servers: BenchServer[],
  codes: number,
): Promise<RoundResult[]> {
  const rounds: RoundResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // Rotate which server goes first, so none always follows another's garbage or cache state.
    const order = servers.map((_, i) => servers[(i + round - 1) % servers.length]!);
    for (const s of order) {
      // Several serving processes (WEB_CONCURRENCY > 1): CPU, switches and RSS summed over them.
      const pids = servingPidsOf(s);
      const cpuBefore = readCpuMicrosOf(pids);
      const switchesBefore = sumSwitches(pids);
      const r = await runWrk(s.url, ROUND_SECONDS, { codes, order: 'random' });
      const cpuAfter = readCpuMicrosOf(pids);
      const switchesAfter = sumSwitches(pids);
      const perK = (n: number) => ((n * 1000) / r.requests).toFixed(1);
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
          `(user ${userPerRequest.toFixed(1)}, kernel ${systemPerRequest.toFixed(1)}), switches per 1k req: ` +
          `slept ${perK(switchesAfter.slept - switchesBefore.slept)}, ` +
          `preempted ${perK(switchesAfter.preempted - switchesBefore.preempted)}, errors ${result.errors}, ` +
          `RSS ${result.rss} MiB`,
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
