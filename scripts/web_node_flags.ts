// The Node flags of the web tier, read from package.json's "web" script (`tsx <flags> main.ts`), so `npm run web`,
// npm start's web process and the redirect benchmark's "ours" run main.ts with the same V8 settings and the
// script stays the one place they are written (docs/adr/0053-web-tier-young-generation.md, 0054-web-tier-keeps-its-heap.md).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The `--…` words between `tsx` and `main.ts` in `root`'s package.json "web" script. */
export function webNodeFlags(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  const script = pkg.scripts?.web;
  if (script === undefined) throw new Error(`${root}/package.json has no "web" script`);
  const words = script.trim().split(/\s+/);
  const entry = words.indexOf('main.ts');
  if (words[0] !== 'tsx' || entry < 0)
    throw new Error(`package.json "web" must read "tsx [--flag…] main.ts", not "${script}"`);
  const flags = words.slice(1, entry);
  const notFlag = flags.find((w) => !w.startsWith('--'));
  if (notFlag !== undefined) throw new Error(`package.json "web": "${notFlag}" is not a Node flag`);
  return flags;
}
