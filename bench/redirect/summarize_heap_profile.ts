// Summarises a V8 sampling heap profile (.heapprofile; BENCH_PROFILER=promoted writes promoted.heapprofile):
// bytes by allocating function and line, innermost frame first, with the two frames that called it, so the
// allocation sites of what survived the young generation can be read without a browser.
//
//   npx tsx bench/redirect/summarize_heap_profile.ts .cache/cpu-profiles/<which>/promoted.heapprofile [top=30] [requests]
import { readFileSync } from 'node:fs';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children?: HeapNode[];
}

const [file, topArg, requestsArg] = process.argv.slice(2);
if (!file) throw new Error('usage: summarize_heap_profile.ts <file.heapprofile> [top] [requests]');
const top = Number(topArg ?? 30);
const requests = requestsArg ? Number(requestsArg) : undefined;
const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode };

const frame = (n: HeapNode) => {
  const f = n.callFrame;
  const where = f.url
    ? `${f.url.replace(/^.*\/(node_modules\/|lib\/|bench\/|server\/)/, '$1')}:${f.lineNumber + 1}`
    : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
};

const bySite = new Map<string, number>();
let total = 0;
const walk = (node: HeapNode, stack: string[]) => {
  const here = [frame(node), ...stack];
  if (node.selfSize > 0) {
    total += node.selfSize;
    const key = here.slice(0, 3).join(' ← ');
    bySite.set(key, (bySite.get(key) ?? 0) + node.selfSize);
  }
  for (const child of node.children ?? []) walk(child, here);
};
walk(profile.head, []);

const per = (bytes: number) => (requests ? ` ${(bytes / requests).toFixed(1)} B/req` : '');
process.stdout.write(`total ${(total / 1024).toFixed(0)} KiB${per(total)}\n`);
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  process.stdout.write(
    `${((100 * bytes) / total).toFixed(1).padStart(5)}% ${String(bytes).padStart(9)}${per(bytes)}  ${site}\n`,
  );
}
