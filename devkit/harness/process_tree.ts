import { readFileSync } from 'node:fs';

/** The direct children of a process (from /proc; empty when it has none or is gone). */
export function listChildPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}
