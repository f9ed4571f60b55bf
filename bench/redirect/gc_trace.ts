// Reads a `node --trace-gc-nvp` log (BENCH_PROFILER=gc in `npm run bench:redirect -- profile`): what the young
// and the full collections of the measured run cost the main thread, and how much each request allocated and
// left to be promoted. V8 prints one line per collection as name=value pairs: `gc=s` a scavenge, `gc=mc` a
// mark-compact; `pause` and `incremental` (marking steps) in ms on the main thread; `allocated` and `promoted`
// in bytes since the collection before.
import { readFileSync } from 'node:fs';

export interface GcEvent {
  atMs: number;
  kind: 'young' | 'full';
  /** Main-thread ms: the pause, plus a full collection's incremental marking steps. */
  mainMs: number;
  allocated: number;
  promoted: number;
}

/** One line's collection, or null for any other line. */
export function parseGcLine(line: string): GcEvent | null {
  const at = /\s(\d+) ms: pause=/.exec(line);
  if (!at) return null;
  const field = (name: string) => Number(new RegExp(`\\s${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
  const gc = /\sgc=(\w+)/.exec(line)?.[1];
  return {
    atMs: Number(at[1]),
    kind: gc === 's' || gc === 'mmc' ? 'young' : 'full',
    mainMs: field('pause') + (gc === 's' ? 0 : field('incremental')),
    allocated: field('allocated'),
    promoted: field('promoted'),
  };
}

/**
 * The collections of the last `windowMs` of the log (the measured run; the warm-up before it is left out) as one
 * line, per request for `requests` requests served in that window.
 */
export function summarizeGcTrace(file: string, requests: number, windowMs: number): string {
  const events = readFileSync(file, 'utf8')
    .split('\n')
    .map(parseGcLine)
    .filter((e) => e !== null);
  if (events.length === 0) return `no collections in ${file}`;
  const end = events[events.length - 1]!.atMs;
  const sum = { young: 0, youngMs: 0, full: 0, fullMs: 0, allocated: 0, promoted: 0 };
  for (const e of events) {
    if (e.atMs < end - windowMs) continue;
    if (e.kind === 'young') {
      sum.young++;
      sum.youngMs += e.mainMs;
    } else {
      sum.full++;
      sum.fullMs += e.mainMs;
    }
    sum.allocated += e.allocated;
    sum.promoted += e.promoted;
  }
  const per = Math.max(1, requests);
  return (
    `GC in the last ${windowMs / 1000} s: ${sum.young} young (${sum.youngMs.toFixed(0)} ms main thread, ` +
    `${((sum.youngMs * 1000) / per).toFixed(2)} µs/req), ${sum.full} full (${sum.fullMs.toFixed(0)} ms incl. ` +
    `incremental marking, ${((sum.fullMs * 1000) / per).toFixed(2)} µs/req); allocated ` +
    `${Math.round(sum.allocated / per)} B/req, promoted ${Math.round(sum.promoted / per)} B/req; log: ${file}`
  );
}
