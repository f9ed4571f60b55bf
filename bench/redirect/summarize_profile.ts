// Summarises a V8 .cpuprofile (what `npm run bench:redirect -- profile` writes under .cache/cpu-profiles/<which>/):
// self time per function (name, file:line), the top N, and the share of idle, GC and program time, so ours and
// bare can be compared side by side without a browser.
//
//   npx tsx bench/redirect/summarize_profile.ts .cache/cpu-profiles/ours/<file>.cpuprofile [top=40] [from-s to-s: only samples taken then, seconds after the profile started]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

const [file, topArg, fromArg, toArg] = process.argv.slice(2);
if (!file) throw new Error('usage: summarize_profile.ts <file.cpuprofile> [top] [from-s to-s]');
const top = Number(topArg ?? 40);
const whole = JSON.parse(readFileSync(file, 'utf8')) as {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
};
// Optionally only the samples taken between two times (seconds after the profile started).
const profile = { nodes: whole.nodes, samples: [] as number[] };
{
  const from = fromArg === undefined ? -Infinity : Number(fromArg) * 1e6;
  const to = toArg === undefined ? Infinity : Number(toArg) * 1e6;
  let at = 0;
  whole.samples.forEach((id, i) => {
    at += whole.timeDeltas[i] ?? 0;
    if (at >= from && at <= to) profile.samples.push(id);
  });
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const hits = new Map<number, number>();
for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
const total = profile.samples.length;

const label = (n: ProfileNode) => {
  const f = n.callFrame;
  const where = f.url
    ? `${f.url.replace(/^.*\/(node_modules\/|lifeline[^/]*\/|hotpath\/)/, '$1')}:${f.lineNumber + 1}`
    : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
};

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, count] of hits) {
  const node = byId.get(id)!;
  const key = label(node);
  self.set(key, (self.get(key) ?? 0) + count);
  // Inclusive: every distinct function on the sample's stack once.
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const k = label(byId.get(at)!);
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + count);
  }
}

const pct = (n: number) => `${((n / total) * 100).toFixed(1)}%`.padStart(6);
const special = ['(idle)', '(garbage collector)', '(program)'];
process.stdout.write(`${file}: ${total} samples\n`);
for (const s of special) process.stdout.write(`${pct(self.get(s) ?? 0)}  ${s}\n`);
process.stdout.write(`\nself time, top ${top}:\n`);
for (const [k, n] of [...self]
  .filter(([k]) => !special.includes(k))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  process.stdout.write(`${pct(n)}  ${k}\n`);
process.stdout.write(`\ninclusive, top ${top}:\n`);
for (const [k, n] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top))
  process.stdout.write(`${pct(n)}  ${k}\n`);
