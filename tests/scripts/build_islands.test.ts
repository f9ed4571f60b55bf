// The checked-in static/islands.js is what Deno and Deno Deploy serve (they do not run esbuild): it must be the
// bundle of islands/ as the tree has it now, or a Deno deployment would hydrate pages with old island code.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildIslandsBundle } from '../../lib/ui/islands_bundle.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';

const CHECKED_IN = join(ROOT, 'static', 'islands.js');

test('static/islands.js is the current bundle of islands/ (npm run build:islands)', async () => {
  const fresh = await buildIslandsBundle();
  assert.ok(fresh, 'esbuild bundled the islands');
  const committed = readFileSync(CHECKED_IN);
  assert.ok(
    Buffer.compare(committed, Buffer.from(fresh)) === 0,
    'static/islands.js is stale: run `npm run build:islands` and commit it',
  );
});

test('build:islands --check fails on a stale copy and passes on the current one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lifeline-islands-'));
  const check = (file: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build_islands.ts', '--check', file], {
      cwd: ROOT,
      encoding: 'utf8',
    });
  try {
    const stale = join(dir, 'islands.js');
    writeFileSync(stale, `${readFileSync(CHECKED_IN, 'utf8')}\n// stale`);
    const refused = check(stale);
    assert.equal(refused.status, 1, refused.stderr);
    assert.match(refused.stderr, /is not the bundle of islands\/ as it is now/);
    const accepted = check(CHECKED_IN);
    assert.equal(accepted.status, 0, accepted.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
