// What the benchmarks read of a process they started, from /proc (Linux): its resident memory and CPU time.
import { readFileSync } from 'node:fs';

/** Resident set size of a process, from /proc (bytes); 0 when it is gone. */
export function rssOf(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
