// .env.example is generated from the configuration schema (npm run env:example): the committed file must be what
// the script makes now, name every setting the schema reads exactly once, and its defaults must be the schema's
// own (a process given every line of it, uncommented, is configured exactly as one given nothing).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseConfig } from '../../lib/shared/config.ts';
import {
  COMPOSE_REQUIRED_SETTINGS,
  COMPOSE_VARIABLES,
  renderEnvExample,
  settingNames,
} from '../../scripts/env_example_render.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';

const COMMITTED = join(ROOT, '.env.example');
const scratch = mkdtempSync(join(tmpdir(), 'lifeline-env-example-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Every `NAME=value` line, commented (`# NAME=value`) or not, in order. */
function assignments(text: string): { name: string; value: string; active: boolean }[] {
  return [...text.matchAll(/^(# )?([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => ({
    name: m[2]!,
    value: m[3]!,
    active: m[1] === undefined,
  }));
}

test('.env.example is what `npm run env:example` makes from the schema now', () => {
  assert.equal(
    readFileSync(COMMITTED, 'utf8'),
    renderEnvExample(ROOT),
    '.env.example is stale: run `npm run env:example` and commit it',
  );
});

test('it names every setting the schema reads exactly once, and the compose variables', () => {
  const names = assignments(readFileSync(COMMITTED, 'utf8')).map((a) => a.name);
  const expected = [...COMPOSE_VARIABLES.map((v) => v.name), ...settingNames()];
  assert.deepEqual([...names].sort(), [...expected].sort());
  assert.equal(new Set(names).size, names.length, 'no name twice');
  assert.ok(names.includes('DATABASE_URL') && names.includes('TEMPORAL_TLS_CLIENT_CERT_PATH'));
  assert.ok(
    !names.includes('TEMPORAL_TLS_CERT'),
    "other tools' names, which the schema refuses, are left out",
  );
});

test("its defaults are the schema's: every line uncommented configures a process as an empty environment does", () => {
  const env: Record<string, string> = {};
  for (const a of assignments(readFileSync(COMMITTED, 'utf8'))) env[a.name] = a.value;
  assert.deepEqual(parseConfig(env), parseConfig({}));
  // And the comparison can fail: one changed default is a different configuration.
  assert.notDeepEqual(parseConfig({ ...env, RESOLVER_CACHE_MAX: '5' }), parseConfig({}));
});

test('the settings compose.yaml requires are blank active lines; the rest are commented', () => {
  const lines = assignments(readFileSync(COMMITTED, 'utf8'));
  const active = lines.filter((a) => a.active).map((a) => a.name);
  assert.deepEqual(
    [...active].sort(),
    [...COMPOSE_VARIABLES.map((v) => v.name), ...COMPOSE_REQUIRED_SETTINGS].sort(),
  );
  for (const name of COMPOSE_REQUIRED_SETTINGS) {
    assert.equal(lines.find((a) => a.name === name)?.value, '', `${name} holds no value in the example`);
  }
});

test('env:example --check fails on a stale copy and passes on the current one', () => {
  const check = (file: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/env_example.ts', '--check', file], {
      cwd: ROOT,
      encoding: 'utf8',
    });
  const stale = join(scratch, 'stale.env');
  writeFileSync(stale, readFileSync(COMMITTED, 'utf8').replace('# PORT=8000', '# PORT=8001'));
  const failed = check(stale);
  assert.equal(failed.status, 1, failed.stderr);
  assert.match(failed.stderr, /run npm run env:example/);
  const passed = check(COMMITTED);
  assert.equal(passed.status, 0, passed.stderr);
});
