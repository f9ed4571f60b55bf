// Writes the islands' browser bundle to static/islands.js, which is checked in: Deno (and Deno Deploy) serve that
// file as it is, because the web process there may not run esbuild's binary (`deno task web` has no --allow-run).
// Node builds the same bundle in memory at start. Run this after changing islands/ and commit the result;
// `--check` only compares (tests/scripts/build_islands.test.ts fails while the checked-in file is stale).
//
//   npm run build:islands [-- --check [file]]     (file: another copy to compare; default static/islands.js)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildIslandsBundle } from '../lib/ui/islands_bundle.ts';

const checkAt = process.argv.indexOf('--check');
const out =
  (checkAt >= 0 && process.argv[checkAt + 1]) ||
  fileURLToPath(new URL('../static/islands.js', import.meta.url));
const bundle = await buildIslandsBundle();
if (!bundle) {
  console.error('Could not bundle the islands (is esbuild installed, and may it run?).');
  process.exit(1);
}
if (checkAt >= 0) {
  let current: Uint8Array | undefined;
  try {
    current = readFileSync(out);
  } catch {}
  if (!current || Buffer.compare(Buffer.from(current), Buffer.from(bundle)) !== 0) {
    console.error(
      `${out} is not the bundle of islands/ as it is now: run npm run build:islands and commit it.`,
    );
    process.exit(1);
  }
  console.error(`islands: ${out} is up to date (${bundle.length} bytes).`);
} else {
  writeFileSync(out, bundle);
  console.error(`islands: ${bundle.length} bytes → ${out}`);
}
