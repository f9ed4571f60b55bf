// What the benchmarks read of a process they started, from /proc (Linux): its resident memory and CPU time.
import { readdirSync, readFileSync } from 'node:fs';
import { listChildPids } from '../devkit/harness/process_tree.ts';

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

/** CPU seconds (user + system) a process has used, from /proc; 0 when it is gone. */
export function cpuSecondsOf(pid: number): number {
  const { user, system } = cpuSplitOf(pid);
  return user + system;
}

/** CPU seconds a process has used in user space and in the kernel on its behalf, from /proc; 0 when it is gone. */
export function cpuSplitOf(pid: number): { user: number; system: number } {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  } catch {
    return { user: 0, system: 0 };
  }
}
export const commandOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
};
/** Every process of the machine whose command is `name` (Postgres: the postmaster and all its backends). */
export const pidsNamed = (name: string) =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => commandOf(pid) === name);
/** Descendants of a process. */
export function descendantsOf(pid: number): number[] {
  const children = listChildPids(pid);
  return [...children, ...children.flatMap(descendantsOf)];
}
