// The Node flags of the web tier and of the worker, read from package.json's "web" and "worker" scripts
// (`tsx <flags> <entry>`), so `npm run web` / `npm run worker`, npm start's processes, the test harness's worker
// processes and the benchmarks run each entry with the same V8 settings, and each script stays the one place they
// are written (docs/adr/0053-web-tier-young-generation.md, 0054-web-tier-keeps-its-heap.md,
// 0105-worker-heap-bounded.md). scripts/lifeline.sh repeats them for the build.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The `--…` words between `tsx` and `entry` in `root`'s package.json script `name`. */
function scriptNodeFlags(root: string, name: string, entry: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  const script = pkg.scripts?.[name];
  if (script === undefined) throw new Error(`${root}/package.json has no "${name}" script`);
  const words = script.trim().split(/\s+/);
  const at = words.indexOf(entry);
  if (words[0] !== 'tsx' || at < 0)
    throw new Error(`package.json "${name}" must read "tsx [--flag…] ${entry}", not "${script}"`);
  const flags = words.slice(1, at);
  const notFlag = flags.find((w) => !w.startsWith('--'));
  if (notFlag !== undefined) throw new Error(`package.json "${name}": "${notFlag}" is not a Node flag`);
  return flags;
}

/** The web tier's Node flags: package.json's "web" script (`tsx <flags> main.ts`). */
export function webNodeFlags(root: string): string[] {
  return scriptNodeFlags(root, 'web', 'main.ts');
}

/** The worker's Node flags: package.json's "worker" script (`tsx <flags> workers/main.ts`). */
export function workerNodeFlags(root: string): string[] {
  return scriptNodeFlags(root, 'worker', 'workers/main.ts');
}
