// The web tier's and the worker's Node flags live in package.json's "web" and "worker" scripts; npm start, the test
// harness's worker processes and the benchmarks read them from there (scripts/web_node_flags.ts), so they must
// parse, and Node must accept them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { webNodeFlags, workerNodeFlags } from '../../scripts/web_node_flags.ts';

test('the web script’s flags: no memory reducer (ADR 0054), a 224 MiB old generation (ADR 0085), 16 MiB semi-spaces (ADR 0103); Node accepts them', () => {
  const flags = webNodeFlags(ROOT);
  assert.deepEqual(flags, ['--no-memory-reducer', '--max-old-space-size=224', '--max-semi-space-size=16']);
  const run = spawnSync(process.execPath, [...flags, '-e', 'console.log(JSON.stringify(process.execArgv))'], {
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout).slice(0, flags.length), flags);
});

test('the worker script’s flags: a 512 MiB old generation (ADR 0105); Node accepts them, whatever the host’s memory', () => {
  const flags = workerNodeFlags(ROOT);
  assert.deepEqual(flags, ['--max-old-space-size=512']);
  const run = spawnSync(
    process.execPath,
    [...flags, '-e', 'console.log(require("node:v8").getHeapStatistics().heap_size_limit / 2 ** 20)'],
    { encoding: 'utf8' },
  );
  assert.equal(run.status, 0, run.stderr);
  // The old generation's 512 MiB and the young generation's semi-spaces (704 MiB on Node 24), not a share of the host's.
  const limitMiB = Number(run.stdout);
  assert.ok(limitMiB >= 512 && limitMiB <= 768, `heap limit ${limitMiB} MiB`);
});

test('a "web" script of another shape is refused with a message, not misread', () => {
  const dir = mkdtempSync(join(tmpdir(), 'web-flags-'));
  try {
    const write = (web: string) =>
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ scripts: { web } }));
    write('tsx main.ts');
    assert.deepEqual(webNodeFlags(dir), []);
    write('node --import tsx main.ts');
    assert.throws(() => webNodeFlags(dir), /must read "tsx \[--flag…\] main.ts"/);
    write('tsx --inspect 9229 main.ts');
    assert.throws(() => webNodeFlags(dir), /"9229" is not a Node flag/);
    writeFileSync(join(dir, 'package.json'), '{"scripts":{}}');
    assert.throws(() => webNodeFlags(dir), /has no "web" script/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
