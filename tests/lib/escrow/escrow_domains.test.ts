import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { createStandaloneAnswerer } from '../../../devkit/harness/link_states.ts';
import { parseConfig } from '../../../lib/shared/config.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';

// Escrow with several short domains (ADR 0078): an export carries each link's domain, and a restore into an
// empty database brings the same code on two domains back as two links, answering by Host as before.
const HOME = 'sho.rt.test';
const TWO = 'two.escrow.test';
const env = { SHORT_BASE_URL: `https://${HOME}`, SHORT_DOMAINS: `${HOME},${TWO}` };
let work: string;
const databases: TestDatabase[] = [];

function cli(script: 'export' | 'restore', args: string[], extra: Record<string, string>) {
  return new Promise<{ code: number; stderr: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'scripts', `${script}.ts`), ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env, ...extra },
      },
    );
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.stdout.resume();
    child.on('exit', (code) => resolve({ code: code ?? 1, stderr }));
  });
}

async function answers(db: TestDatabase): Promise<string[]> {
  const answerer = createStandaloneAnswerer(parseConfig({ DATABASE_URL: db.url, ...env }), db.sql);
  const out: string[] = [];
  for (const host of [HOME, TWO]) {
    for (const code of ['escA', 'escB']) {
      const a = await answerer.answer({
        method: 'GET',
        code,
        query: '',
        header: (name) => (name === 'host' ? host : undefined),
      });
      out.push(`${host}/${code} ${a.status} ${a.headers.Location ?? '-'}`);
    }
  }
  return out;
}

before(() => {
  work = mkdtempSync(join(tmpdir(), 'lifeline-escrow-domains-'));
});
after(async () => {
  for (const db of databases) await db.drop().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

describe('escrow with several short domains', () => {
  test('export and restore round-trip each link’s domain', async () => {
    const source = await createTestDatabase();
    databases.push(source);
    await source.sql`
      INSERT INTO links (code, domain, target_url, status, safety, origin, owner) VALUES
        ('escA', '', 'https://news.example/home-a', 'active', 'clean', 'api', 't'),
        (${`${TWO}/escA`}, ${TWO}, 'https://news.example/two-a', 'active', 'clean', 'api', 't'),
        (${`${TWO}/escB`}, ${TWO}, 'https://news.example/two-b', 'gone', 'clean', 'api', 't')`;
    await source.sql`
      INSERT INTO vendor_links (code, vendor, vendor_id, state)
      VALUES (${`${TWO}/escA`}, 'bitly', 'bit.two.test/escA', 'synced')`;
    const before = await answers(source);
    assert.deepEqual(before, [
      `${HOME}/escA 301 https://news.example/home-a`,
      `${HOME}/escB 404 -`,
      `${TWO}/escA 301 https://news.example/two-a`,
      `${TWO}/escB 410 -`,
    ]);
    const dir = join(work, 'export');
    const exported = await cli('export', ['--out', dir], { DATABASE_URL: source.url });
    assert.equal(exported.code, 0, exported.stderr);

    const target = await createTestDatabase();
    databases.push(target);
    const restored = await cli('restore', [dir], { DATABASE_URL: target.url });
    assert.equal(restored.code, 0, restored.stderr);
    const rows = await target.sql<{ code: string; domain: string; target_url: string }[]>`
      SELECT code, domain, target_url FROM links ORDER BY code`;
    assert.deepEqual(
      rows.map((r) => [r.code, r.domain, r.target_url]),
      [
        ['escA', '', 'https://news.example/home-a'],
        [`${TWO}/escA`, TWO, 'https://news.example/two-a'],
        [`${TWO}/escB`, TWO, 'https://news.example/two-b'],
      ],
    );
    const [vendor] = await target.sql<{ vendor_id: string }[]>`
      SELECT vendor_id FROM vendor_links WHERE code = ${`${TWO}/escA`}`;
    assert.equal(vendor?.vendor_id, 'bit.two.test/escA');
    assert.deepEqual(await answers(target), before);
  });
});
