// Where a stretch of a benchmark's wall time went: the CPU each group of processes used, and counters that only
// grow (Postgres's block reads and hits, WAL, an event loop's busy time), sampled every `intervalMs` and read back
// as the difference between two moments. bench/reconcile_scale.ts splits each reconciliation leg with it, so a leg
// that grows faster than its work at ten million links says whether the worker, Postgres, Temporal or a fake
// took the extra time.

import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Sql } from '../lib/stores/sql.ts';
import { cpuSplitOf } from './process_stats.ts';

/** CPU seconds a process has used so far: all of it, and of it in the kernel. */
interface ProcessCpu {
  cpu: number;
  system: number;
}

/** One reading: when, each group's processes with the CPU each has used so far, and each counter so far. */
export interface ResourceSample {
  at: number;
  processes: Record<string, Map<number, ProcessCpu>>;
  counters: Record<string, number>;
}

/** What changed between two moments: wall seconds, CPU seconds per group (in the kernel), each counter's growth. */
export interface ResourceDelta {
  seconds: number;
  cpu: Record<string, number>;
  system: Record<string, number>;
  counters: Record<string, number>;
}

export interface ResourceSamplerOptions {
  intervalMs?: number;
  /** The processes of each group, asked again at every sample (Postgres's backends come and go). */
  groups: () => Record<string, number[]>;
  /** Counters that only grow, read at every sample; a failed read keeps the previous values. */
  counters?: () => Promise<Record<string, number>>;
}

export interface ResourceSampler {
  /** The difference between the samples nearest to `from` and `to` (epoch ms); null before two samples. */
  between(from: number, to: number): ResourceDelta | null;
  /** Takes a last sample and stops. */
  stop(): Promise<void>;
}

/**
 * Samples until stopped. A group's CPU between two samples is, for each of its processes at the later one, what
 * it used since the earlier one (all of it when it was not there yet). A process that exits between them takes
 * what it used since the earlier one with it (it is left out, never subtracted), so Postgres's short-lived
 * processes (an autovacuum worker, a parallel worker) may be missing: the machine's own counters show how much.
 */
export function startResourceSampler(options: ResourceSamplerOptions): ResourceSampler {
  const intervalMs = options.intervalMs ?? 500;
  const samples: ResourceSample[] = [];
  let last: Record<string, number> = {};
  let stopped = false;
  const take = async () => {
    const at = Date.now();
    const processes: Record<string, Map<number, ProcessCpu>> = {};
    for (const [group, pids] of Object.entries(options.groups())) {
      const byPid = new Map<number, ProcessCpu>();
      for (const pid of pids) {
        const used = cpuSplitOf(pid);
        byPid.set(pid, { cpu: used.user + used.system, system: used.system });
      }
      processes[group] = byPid;
    }
    try {
      last = (await options.counters?.()) ?? {};
    } catch {
      // Keep the previous reading: a counter that did not move is better than a hole in the series.
    }
    samples.push({ at, processes, counters: last });
  };
  let running: Promise<void> = Promise.resolve();
  let inFlight = false;
  // A tick while a sample is still being taken (a slow query on a loaded machine) is skipped, not queued.
  const tick = () => {
    if (inFlight) return;
    inFlight = true;
    running = take().finally(() => {
      inFlight = false;
    });
  };
  tick();
  // Sampling never keeps a benchmark alive: one that fails before stop() still exits.
  const timer = setInterval(tick, intervalMs).unref();
  const nearest = (at: number) =>
    samples.reduce((best, s) => (Math.abs(s.at - at) < Math.abs(best.at - at) ? s : best));
  return {
    between(from, to) {
      if (samples.length < 2) return null;
      const a = nearest(from);
      const b = nearest(to);
      const diff = (x: Record<string, number>, y: Record<string, number>) =>
        Object.fromEntries(Object.keys(y).map((k) => [k, (y[k] ?? 0) - (x[k] ?? 0)]));
      const cpu: Record<string, number> = {};
      const system: Record<string, number> = {};
      for (const [group, later] of Object.entries(b.processes)) {
        const earlier = a.processes[group];
        cpu[group] = 0;
        system[group] = 0;
        for (const [pid, used] of later) {
          const before = earlier?.get(pid);
          cpu[group] += used.cpu - (before?.cpu ?? 0);
          system[group] += used.system - (before?.system ?? 0);
        }
      }
      return { seconds: (b.at - a.at) / 1000, cpu, system, counters: diff(a.counters, b.counters) };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await running;
      await take();
    },
  };
}

/**
 * The cumulative counters of Postgres that say where a statement's time went, for the database `sql` is
 * connected to: its blocks read into shared buffers and found there, the time reading took (only with
 * `track_io_timing` on; otherwise 0), rows inserted and updated; and the cluster's WAL bytes and the buffers
 * backends had to write out themselves to make room (pg_stat_bgwriter). Backends report at the end of a
 * transaction and at most about once a second, so a difference is good to about a second.
 */
export async function postgresCounters(sql: Sql): Promise<Record<string, number>> {
  const [row] = await sql<Record<string, string | number>[]>`
    SELECT d.blks_read, d.blks_hit, d.blk_read_time, d.tup_inserted, d.tup_updated,
           b.buffers_backend, w.wal_bytes
    FROM pg_stat_database AS d, pg_stat_bgwriter AS b, pg_stat_wal AS w
    WHERE d.datname = current_database()`;
  return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
}

/**
 * The machine as a whole (Linux): seconds of all its cores spent in user space, in the kernel, idle, and idle
 * waiting for the disk (/proc/stat); KiB read from block devices and pages the kernel scanned to reclaim memory,
 * by allocating processes themselves (direct) and by kswapd (/proc/vmstat).
 */
export function machineCounters(): Record<string, number> {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0] = cpu;
  const vm = new Map(
    readFileSync('/proc/vmstat', 'utf8')
      .split('\n')
      .map((line) => line.split(' ') as [string, string]),
  );
  const v = (k: string) => Number(vm.get(k) ?? 0);
  return {
    machineUser: (user + nice) / 100,
    machineSystem: (system + irq + softirq) / 100,
    machineIdle: idle / 100,
    machineIowait: iowait / 100,
    diskReadKib: v('pgpgin'),
    reclaimScanDirect: v('pgscan_direct'),
    reclaimScanKswapd: v('pgscan_kswapd'),
  };
}

/** This process's event loop: milliseconds busy so far. */
export const eventLoopBusyMs = () => performance.eventLoopUtilization().active;
