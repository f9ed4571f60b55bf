// The Debian packages the suite needs are listed twice: in .ci/run (CI installs them before `npm test`) and in
// scripts/test_services.ts (`npm test` on a machine set up by hand checks and installs them). A package added to
// one list only would work here and fail on the next fresh machine, so the two must name the same packages.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { APT_PACKAGES } from '../../scripts/test_services.ts';

test('.ci/run and scripts/test_services.ts install the same Debian packages', () => {
  const run = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
  const list = /^packages=\(([^)]*)\)/m.exec(run);
  assert.ok(list, '.ci/run has a packages=(...) list');
  const inRun = list[1]!.split(/\s+/).filter(Boolean).sort();
  assert.deepEqual([...APT_PACKAGES].sort(), inRun);
});
