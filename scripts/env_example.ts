// Writes .env.example from the configuration schema (scripts/env_example_render.ts): every setting with its
// default, and the variables compose.yaml reads. Run it after adding or changing a setting and commit the result;
// `--check` only compares (tests/scripts/env_example.test.ts fails while the committed file is stale).
//
//   npm run env:example [-- --check [file]]     (file: another copy to compare; default .env.example)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderEnvExample } from './env_example_render.ts';
import { ROOT } from './temporal_cli.ts';

const checkAt = process.argv.indexOf('--check');
const out = (checkAt >= 0 && process.argv[checkAt + 1]) || join(ROOT, '.env.example');
const text = renderEnvExample(ROOT);
if (checkAt >= 0) {
  let current: string | undefined;
  try {
    current = readFileSync(out, 'utf8');
  } catch {}
  if (current !== text) {
    console.error(
      `${out} is not what the configuration schema makes: run npm run env:example and commit it.`,
    );
    process.exit(1);
  }
  console.error(`env:example: ${out} is up to date.`);
} else {
  writeFileSync(out, text);
  console.error(
    `env:example: ${text.split('\n').filter((l) => /^#? ?[A-Z][A-Z0-9_]*=/.test(l)).length} variables → ${out}`,
  );
}
