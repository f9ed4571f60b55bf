// main.ts switches Node's AsyncContextFrame to its active implementation while its imports are evaluated, before
// it serves anything (ADR 0056). The probe reads Node's internal module (--expose-internals) as the process exits;
// main.ts exits at once here, on its first configuration check (no DATABASE_URL), so what the probe sees is the
// state main.ts's own code starts in.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/temporal_cli.ts';

const PROBE = join(ROOT, 'tests/fixtures/async_context_probe.mjs');

function frameStateAfter(...entry: string[]): { status: number | null; stderr: string } {
  const run = spawnSync(
    process.execPath,
    ['--expose-internals', '--import', 'tsx', '--import', PROBE, ...entry],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' },
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { status: run.status, stderr: run.stderr };
}

test('main.ts: the async context frame is active before its own code runs', () => {
  const { status, stderr } = frameStateAfter('main.ts');
  assert.equal(status, 78, stderr);
  assert.match(stderr, /DATABASE_URL: is required/);
  assert.match(stderr, /async context frame active: true/);
});

test('the probe tells the states apart: a process that never reads node:async_hooks keeps it inactive', () => {
  const { status, stderr } = frameStateAfter('--eval', '');
  assert.match(stderr, /async context frame active: false/, `exit ${status}: ${stderr}`);
});
