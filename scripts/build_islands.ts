// Writes the islands' browser bundle to static/islands.js, for runtimes that cannot run esbuild at start
// (Deno Deploy; `deno task web` runs this first so the web process itself needs no --allow-run).
// Node builds the bundle in memory at start and does not need this file.
//
//   npm run build:islands
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildIslandsBundle } from '../lib/ui/islands_bundle.ts';

const out = fileURLToPath(new URL('../static/islands.js', import.meta.url));
const bundle = await buildIslandsBundle();
if (!bundle) {
  console.error('Could not bundle the islands (is esbuild installed, and may it run?).');
  process.exit(1);
}
writeFileSync(out, bundle);
console.error(`islands: ${bundle.length} bytes → ${out}`);
