// The docs check: a planted tracker word, a dead `*.md` citation and a dead heading link are each found, the
// repository as it stands has none, and the anchors follow GitHub's rules (so a runbook_url resolves there too).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { checkRepository, headingAnchors } from '../../scripts/check_docs.ts';

/** Built, so this file does not itself hold the word and number it plants. */
const TRACKER_WORD = ['iss', 'ue'].join('');

describe('docs check', () => {
  const root = mkdtempSync(join(tmpdir(), 'lifeline-docs-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  function plant(files: Record<string, string>) {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    execFileSync('git', ['init', '-q'], { cwd: root });
  }

  test('finds a tracker word, a dead citation and dead anchors; passes what resolves', () => {
    plant({
      'docs/GUIDE.md':
        '# Guide\n\n## Alert runbook\n\n### LifelineWebDown\n\nSee [the rest](#alert-runbook).\n',
      'lib/ok.ts': '// Why: docs/GUIDE.md#lifelinewebdown explains it; upstream porsager/postgres#747.\n',
      'lib/tracker.ts': `// Added for ${TRACKER_WORD} 41.\n`,
      'lib/dead.ts': '// The contract is in VENDORS.md section 2.\n',
      'ops/rules.yml': 'runbook_url: docs/GUIDE.md#lifelinewebup\n',
      'docs/LINKS.md': '# Links\n\n[gone](#nowhere) and [guide](GUIDE.md#guide).\n',
    });
    const findings = checkRepository(root).map((f) => `${f.file}:${f.line}: ${f.what}`);
    assert.deepEqual(findings.sort(), [
      'docs/LINKS.md:3: #nowhere: no such heading in this file',
      'lib/dead.ts:1: cites VENDORS.md, which is not in the repository',
      `lib/tracker.ts:1: tracker word "${TRACKER_WORD} 41"`,
      'ops/rules.yml:1: docs/GUIDE.md#lifelinewebup: no such heading in docs/GUIDE.md',
    ]);
  });

  test('the repository itself has no findings', () => {
    assert.deepEqual(checkRepository(), []);
  });

  test('anchors as GitHub makes them', () => {
    const anchors = headingAnchors(
      "# A `code` title: yes!\n## Same\n## Same\n```\n# not a heading\n```\n## Ours and Bitly's numbers\n",
    );
    assert.deepEqual([...anchors].sort(), ['a-code-title-yes', 'ours-and-bitlys-numbers', 'same', 'same-1']);
  });
});
