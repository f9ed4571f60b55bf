// `rest` mode: one server under one path's load in BENCH_ROUNDS windows of BENCH_ROUND_SECONDS, with
// BENCH_REST_SECONDS of idle between them, as the alternating rounds leave every server (and a newsroom's night
// leaves production). The long mode's continuous load cannot show a server that is slower after an idle spell;
// this shows it window by window: req/s, CPU per request (user and kernel), minor page faults and RSS.
// With BENCH_PROFILER=cpu, the server runs under --cpu-prof (whole life; cut into windows with
// `npx tsx bench/redirect/summarize_profile.ts <file> 40 <from-s> <to-s>`, times from the process start).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { warmUp } from './alternate_rounds.ts';
import { readCpuMicrosOf, readMinorFaultsOf, readRssMiBOf, servingPidsOf } from './bench_server.ts';
import { REST_SECONDS, ROOT, ROUND_SECONDS, ROUNDS, say, sleep } from './bench_settings.ts';
import type { ContestantName, PathSpec } from './redirect_paths.ts';
import { runWrk } from './run_wrk.ts';
import { type RunContext, startContestant } from './start_contestant.ts';

export interface RestWindow {
  window: number;
  rps: number;
  p99Us: number;
  userUs: number;
  kernelUs: number;
  faultsPerK: number;
  rss: number;
}

export async function benchRest(
  which: ContestantName,
  spec: PathSpec,
  ctx: RunContext,
): Promise<RestWindow[]> {
  const cpuProfile = process.env.BENCH_PROFILER === 'cpu';
  const dir = join(ROOT, '.cache/cpu-profiles', `rest-${which}-${spec.key}`);
  if (cpuProfile) mkdirSync(dir, { recursive: true });
  const server = await startContestant(
    which,
    spec,
    ctx,
    cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [],
  );
  if (!server) throw new Error(`${which} cannot run here`);
  const started = Date.now();
  const windows: RestWindow[] = [];
  try {
    await warmUp(server, spec.codes);
    const pids = servingPidsOf(server);
    for (let window = 1; window <= ROUNDS; window++) {
      if (window > 1) await sleep(REST_SECONDS * 1000);
      const cpuBefore = readCpuMicrosOf(pids);
      const faultsBefore = readMinorFaultsOf(pids);
      const from = (Date.now() - started) / 1000;
      const r = await runWrk(server.url, ROUND_SECONDS, { codes: spec.codes, order: 'random' });
      const cpuAfter = readCpuMicrosOf(pids);
      const w: RestWindow = {
        window,
        rps: r.rps,
        p99Us: r.p99_us,
        userUs: (cpuAfter.user - cpuBefore.user) / r.requests,
        kernelUs: (cpuAfter.system - cpuBefore.system) / r.requests,
        faultsPerK: ((readMinorFaultsOf(pids) - faultsBefore) * 1000) / r.requests,
        rss: readRssMiBOf(pids),
      };
      windows.push(w);
      say(
        `rest ${which} ${spec.key} window ${window} (${from.toFixed(0)}–${((Date.now() - started) / 1000).toFixed(0)} s ` +
          `after start): ${Math.round(w.rps)} req/s, p99 ${(w.p99Us / 1000).toFixed(2)} ms, CPU ` +
          `${(w.userUs + w.kernelUs).toFixed(1)} µs/req (user ${w.userUs.toFixed(1)}, kernel ${w.kernelUs.toFixed(1)}), ` +
          `page faults per 1k req ${w.faultsPerK.toFixed(1)}, RSS ${w.rss} MiB`,
      );
    }
  } finally {
    await server.stop();
  }
  if (cpuProfile) say(`rest: CPU profile under ${dir}`);
  return windows;
}
