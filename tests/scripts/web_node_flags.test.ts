// The web tier's Node flags live in package.json's "web" script; npm start and the redirect benchmark read them
// from there (scripts/web_node_flags.ts), so they must parse, and Node must accept them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { webNodeFlags } from '../../scripts/web_node_flags.ts';

test('the web script’s flags: no memory reducer (ADR 0054), a 224 MiB old generation (ADR 0085), 16 MiB semi-spaces (ADR 0103); Node accepts them', () => {
  const flags = webNodeFlags(ROOT);
  assert.deepEqual(flags, ['--no-memory-reducer', '--max-old-space-size=224', '--max-semi-space-size=16']);
  const run = spawnSync(process.execPath, [...flags, '-e', 'console.log(JSON.stringify(process.execArgv))'], {
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout).slice(0, flags.length), flags);
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
