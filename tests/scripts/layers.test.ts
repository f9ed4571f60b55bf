// The layering rules (.dependency-cruiser.cjs) refuse imports that go the wrong way: proved on a small tree of
// deliberately wrong imports, one per rule, laid out like the repository in a temporary folder. The real tree
// is checked by `npm run lint:layers` (part of `npm test`).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from '../../scripts/temporal_cli.ts';

const run = promisify(execFile);
let dir: string;

/** Each file imports what its name says it must not; the rule that must catch it is the map's key. */
const WRONG: Record<string, Record<string, string>> = {
  'lib-never-reaches-up': {
    'lib/links/a.ts': "import { x } from '../../routes/r.ts';\nexport const a = x;",
    'lib/links/n.ts': "import { fake } from '../../devkit/fakes/fake.ts';\nexport const n = fake;",
  },
  'routes-reach-data-through-lib': {
    'routes/api/b.ts':
      "import { getLinkByCode } from '../../lib/stores/link_store.ts';\nexport const b = getLinkByCode;",
  },
  'stores-stand-on-shared-only': {
    'lib/stores/c.ts': "import { a } from '../links/a2.ts';\nexport const c = a;",
  },
  'shared-is-the-ground-floor': {
    'lib/shared/d.ts': "import { a } from '../links/a2.ts';\nexport const d = a;",
  },
  'workflows-import-types-only': {
    'workflows/e.ts': "import { a } from '../lib/links/a2.ts';\nexport const e = a;",
  },
  'callers-use-the-contract': {
    'lib/temporal/f.ts': "import { w } from '../../workflows/w.ts';\nexport const f = w;",
  },
  'activities-are-thin': {
    'activities/g.ts':
      "import { getLinkByCode } from '../lib/stores/link_store.ts';\nexport const g = getLinkByCode;",
  },
  'components-render-lib-types': {
    'components/H.tsx':
      "import type { LinkRow } from '../lib/stores/link_rows.ts';\nexport type H = LinkRow;",
  },
  'temporal-sdk-only-in-the-seam': {
    'lib/links/i.ts': "import { Client } from '@temporalio/client';\nexport const i = Client;",
  },
  'tooling-never-imports-tests': {
    'bench/l.ts': "import { t } from '../tests/t.ts';\nexport const l = t;",
  },
  'the-product-never-imports-the-devkit': {
    'routes/m.ts': "import { fake } from '../devkit/fakes/fake.ts';\nexport const m = fake;",
  },
  // A capability imports only lower layers of CAPABILITY_ORDER: not one above (type-only counts), not a sibling.
  'lib-redirect-imports-downward': {
    'lib/redirect/l.ts': "import type { a } from '../links/a2.ts';\nexport type L = typeof a;",
  },
  'lib-links-imports-downward': {
    'lib/links/m.ts': "import { e } from '../escrow/e2.ts';\nexport const m = e;",
  },
  'capabilities-have-a-place': {
    'lib/newfolder/n.ts':
      "import { getLinkByCode } from '../stores/link_store.ts';\nexport const n = getLinkByCode;",
  },
  'no-circular': {
    'lib/links/j.ts': "import { k } from './k.ts';\nexport const j = () => k;",
    'lib/links/k.ts': "import { j } from './j.ts';\nexport const k = () => j;",
  },
};

/** Files the wrong ones import (allowed on their own). */
const HELPERS: Record<string, string> = {
  'routes/r.ts': 'export const x = 1;',
  'lib/links/a2.ts': 'export const a = 1;',
  'lib/escrow/e2.ts': 'export const e = 1;',
  'lib/stores/link_store.ts': 'export const getLinkByCode = 1;',
  'lib/stores/link_rows.ts': 'export interface LinkRow { code: string }',
  'workflows/w.ts': 'export const w = 1;',
  'workflows/contract.ts': 'export const c = 1;',
  'tests/t.ts': 'export const t = 1;',
  'devkit/fakes/fake.ts': 'export const fake = 1;',
};

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lifeline-layers-'));
  cpSync(join(ROOT, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  const files = { ...HELPERS, ...Object.assign({}, ...Object.values(WRONG)) } as Record<string, string>;
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), `${text}\n`);
  }
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  // The SDK must resolve for the Temporal rule to see it.
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('every layering rule refuses its deliberately wrong import, and only those', async () => {
  const bin = join(ROOT, 'node_modules', '.bin', 'depcruise');
  const result = await run(
    bin,
    [
      '--config',
      '.dependency-cruiser.cjs',
      '--output-type',
      'json',
      'lib',
      'routes',
      'workflows',
      'activities',
      'components',
      'bench',
      'devkit',
    ],
    {
      cwd: dir,
    },
  ).catch((error: { stdout: string }) => ({ stdout: error.stdout }));
  const report = JSON.parse(result.stdout) as {
    summary: { violations: { rule: { name: string }; from: string; to: string }[] };
  };
  const found = new Map<string, string[]>();
  for (const v of report.summary.violations)
    found.set(v.rule.name, [...(found.get(v.rule.name) ?? []), v.from]);
  for (const [rule, files] of Object.entries(WRONG)) {
    const from = found.get(rule) ?? [];
    // A cycle is reported once, from one of its files.
    const wrong = Object.keys(files);
    assert.ok(
      wrong.some((file) => from.includes(file)),
      `${rule} did not refuse ${wrong.join(' / ')}`,
    );
  }
  // Every file of a rule that is not a cycle is refused, not only one (lib/ reaches neither routes/ nor devkit/).
  for (const file of Object.keys(WRONG['lib-never-reaches-up'] ?? {}))
    assert.ok(
      found.get('lib-never-reaches-up')?.includes(file),
      `lib-never-reaches-up did not refuse ${file}`,
    );
  // The helpers on their own break no rule (a wrong file may break more than one).
  const wrongFiles = new Set(Object.values(WRONG).flatMap((files) => Object.keys(files)));
  for (const [rule, from] of found) {
    for (const file of from) assert.ok(wrongFiles.has(file), `${rule} refused ${file}`);
  }
});

test('the repository itself keeps every rule', async () => {
  const bin = join(ROOT, 'node_modules', '.bin', 'depcruise');
  const { stdout } = await run(
    bin,
    ['--config', '.dependency-cruiser.cjs', '--output-type', 'err', ...LAYERED],
    {
      cwd: ROOT,
    },
  );
  assert.match(stdout, /no dependency violations found/);
});

const LAYERED = [
  'lib',
  'routes',
  'components',
  'islands',
  'server',
  'boot',
  'activities',
  'workers',
  'workflows',
  'scripts',
  'bench',
  'devkit',
  'main.ts',
  'main_deno.ts',
];
