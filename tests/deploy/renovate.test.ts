// renovate.json, checked without Renovate (the bot runs on the forge, and its JSON schema and presets are on the
// internet, which these machines cannot reach): what would make it silently stop proposing updates is checked
// against the repository itself. Every custom manager's file pattern names files that exist and its match strings
// find every pinned tool version in them (a regex that matches nothing is Renovate's quiet failure); the same tool
// is pinned to the same version wherever it appears; every package rule names packages package.json has; and the
// versions in package.json are exact, as `rangeStrategy: pin` keeps them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from '../../scripts/temporal_cli.ts';

type Manager = { customType: string; managerFilePatterns: string[]; matchStrings: string[] };
type Rule = { matchPackageNames?: string[]; groupName?: string };
const config = JSON.parse(readFileSync(join(ROOT, 'renovate.json'), 'utf8')) as {
  customManagers: Manager[];
  packageRules: Rule[];
};
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<
  string,
  Record<string, string>
>;
const packages: Record<string, string> = {
  ...pkg.dependencies,
  ...pkg.devDependencies,
  ...pkg.optionalDependencies,
};
const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);

/** Renovate writes a regex file pattern between slashes; anything else is a glob, which this file does not use. */
function filePattern(pattern: string): RegExp {
  assert.match(pattern, /^\/.*\/$/, `file pattern ${pattern} is written as a /regex/`);
  return new RegExp(pattern.slice(1, -1));
}

/** Renovate's package-name patterns: exact names, `prefix/**` globs, and `!name` exclusions. */
function matchesName(pattern: string, name: string): boolean {
  if (pattern.endsWith('/**')) return name.startsWith(pattern.slice(0, -2));
  return pattern === name;
}

describe('renovate.json against the repository', () => {
  test('every custom manager finds its pinned versions, and a tool has one version everywhere it is pinned', () => {
    const found = new Map<string, Set<string>>();
    for (const manager of config.customManagers) {
      assert.equal(manager.customType, 'regex');
      const files = tracked.filter((file) =>
        manager.managerFilePatterns.some((p) => filePattern(p).test(file)),
      );
      assert.ok(files.length > 0, `${manager.managerFilePatterns} names no tracked file`);
      for (const file of files) {
        const text = readFileSync(join(ROOT, file), 'utf8');
        for (const source of manager.matchStrings) {
          const matches = [...text.matchAll(new RegExp(source, 'g'))];
          assert.ok(matches.length > 0, `${source} matches nothing in ${file}`);
          for (const match of matches) {
            const { datasource, depName, currentValue } = match.groups ?? {};
            assert.equal(datasource, 'go', `${file}: ${match[0]}`);
            assert.match(currentValue ?? '', /^\d+\.\d+\.\d+$/, `${file}: ${match[0]}`);
            const versions = found.get(depName ?? '') ?? new Set<string>();
            versions.add(currentValue ?? '');
            found.set(depName ?? '', versions);
          }
        }
      }
    }
    assert.deepEqual([...found.keys()].sort(), [
      'github.com/prometheus-operator/prometheus-operator',
      'github.com/temporalio/cli',
      'github.com/yannh/kubeconform',
      'helm.sh/helm/v3',
      'k8s.io/kubernetes',
    ]);
    for (const [tool, versions] of found)
      assert.equal(versions.size, 1, `${tool} is pinned to ${[...versions]}`);
  });

  test('.ci/run installs no Go tool at a literal version that Renovate cannot see', () => {
    const run = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    assert.doesNotMatch(
      run,
      /@v\d/,
      'a Go module version is written inline instead of in a renovate variable',
    );
    const watched = new Set(
      [...run.matchAll(/# renovate: [^\n]+\n([a-z_]+_version)=/g)].map((m) => m[1] as string),
    );
    const used = [...run.matchAll(/@v\$([a-z_]+_version)/g)].map((m) => m[1] as string);
    assert.ok(used.length >= 5);
    for (const variable of used) assert.ok(watched.has(variable), `${variable} has no renovate comment`);
  });

  test('package rules name packages package.json has, and the Temporal SDK is one group at one version', () => {
    const names = Object.keys(packages);
    for (const rule of config.packageRules) {
      for (const pattern of rule.matchPackageNames ?? []) {
        if (pattern.startsWith('!')) continue;
        assert.ok(
          names.some((name) => matchesName(pattern, name)),
          `rule ${rule.groupName ?? ''} names ${pattern}, which package.json does not have`,
        );
      }
    }
    const temporal = names.filter((name) => name.startsWith('@temporalio/'));
    assert.ok(temporal.length >= 5);
    assert.equal(
      new Set(temporal.map((name) => packages[name])).size,
      1,
      'every @temporalio package at one version',
    );
    const group = config.packageRules.find((rule) => rule.groupName === 'Temporal SDK');
    for (const name of temporal)
      assert.ok(
        group?.matchPackageNames?.some((p) => matchesName(p, name)),
        name,
      );
  });

  test('every version in package.json is exact, as rangeStrategy "pin" keeps them', () => {
    for (const [name, version] of Object.entries(packages)) {
      assert.match(version, /^\d+\.\d+\.\d+$/, `${name}@${version} is a range`);
    }
  });
  test('OpenTelemetry is one group, on the SDK major the Temporal interceptors depend on', () => {
    const otel = Object.keys(packages).filter((name) => name.startsWith('@opentelemetry/'));
    assert.ok(otel.length >= 5);
    const group = config.packageRules.find((rule) => rule.groupName === 'OpenTelemetry');
    for (const name of otel)
      assert.ok(
        group?.matchPackageNames?.some((p) => matchesName(p, name)),
        name,
      );
    // The interceptors package names the SDK's range; ours must sit in it, or two SDKs would be installed.
    const interceptors = JSON.parse(
      readFileSync(
        join(ROOT, 'node_modules', '@temporalio', 'interceptors-opentelemetry', 'package.json'),
        'utf8',
      ),
    ) as { version: string; dependencies: Record<string, string> };
    assert.equal(interceptors.version, packages['@temporalio/worker']);
    for (const name of ['@opentelemetry/sdk-trace-base', '@opentelemetry/core', '@opentelemetry/resources']) {
      const wanted = interceptors.dependencies[name]?.match(/^\^(\d+)\./)?.[1];
      assert.equal(packages[name]?.split('.')[0], wanted, `${name} ${packages[name]} in ^${wanted}`);
    }
  });
});
