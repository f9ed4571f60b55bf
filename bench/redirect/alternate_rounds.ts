// Warm-up and alternated wrk rounds over several servers (ABAB…, the first server rotating each round), with
// each server's CPU per request, context switches and RSS read from /proc around its round.

import { type BenchServer, readCpuMicros, readRssMiB, readSwitches } from './bench_server.ts';
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

/** Seconds of the in-order pass that requests every one of `codes` at least once. */
function toWarmupSeconds(codes: number): number {
  return WARMUP_SECONDS ?? Math.max(3, Math.ceil(codes / 2000));
}

/** A server that fills a cache gets every code once in order first; then all get 3 s at random (the JIT). */
export async function warmUp(server: BenchServer, codes: number): Promise<void> {
  if (server.fillsCache) {
    await runWrk(server.url, toWarmupSeconds(codes), { codes, order: 'seq' });
    await sleep(500);
  }
  await runWrk(server.url, 3, { codes, order: 'random' });
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
      const cpuBefore = readCpuMicros(s.pid);
      const switchesBefore = readSwitches(s.pid);
      const r = await runWrk(s.url, ROUND_SECONDS, { codes, order: 'random' });
      const cpuAfter = readCpuMicros(s.pid);
      const switchesAfter = readSwitches(s.pid);
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
        rss: readRssMiB(s.pid),
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
