import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import {
  createStandaloneAnswerer,
  describeAnswers,
  seedLinkStates,
} from '../../../devkit/harness/link_states.ts';
import { exportEscrow } from '../../../lib/escrow/export_escrow.ts';
import { restoreEscrow } from '../../../lib/escrow/restore_escrow.ts';
import { finishPendingIndexes } from '../../../lib/escrow/restore_indexes.ts';
import { type Config, parseConfig } from '../../../lib/shared/config.ts';
import {
  type EscrowReader,
  RESTORED_SAFETY_REASON,
  withEscrowSnapshot,
} from '../../../lib/stores/escrow_store.ts';
import { createCanonicalTargetPolicy } from '../../../lib/targets/target_rule.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';

// Export → drop the database → restore → every code answers exactly as before (status, Location, warn page),
// through the real CLIs; the refusals an operator can meet; and a merge that never re-points an existing code.
const LINKS = 3_000;
let work: string;
const databases: TestDatabase[] = [];

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

const configFor = (db: TestDatabase): Config =>
  parseConfig({
    DATABASE_URL: db.url,
    SHORT_BASE_URL: 'https://sho.rt.test',
    UTM_PARAMS: 'utm_source=short',
  });

/** Runs `npm run <script> -- args` the way an operator does (tsx, the repository's scripts). */
function cli(
  script: 'export' | 'restore',
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--max-semi-space-size=2',
        '--max-old-space-size=128',
        join(ROOT, 'scripts', `${script}.ts`),
        ...args,
      ],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/**
 * A links file with each line re-serialised as asRestored writes it: a jsonb column (routing_rules) is exported in
 * Postgres's own spacing, which a parse and stringify compacts; keys and values stay in their order.
 */
function compacted(linksFile: string): string {
  return linksFile
    .split('\n')
    .map((line) => (line === '' ? line : JSON.stringify(JSON.parse(line))))
    .join('\n');
}

/**
 * An exported links file as a restore loads it: no row vouches for its own safety (`clean` becomes `unknown`, a
 * warning or a block stays) and every link is due a re-scan; every other byte as exported.
 */
function asRestored(linksFile: string): string {
  return linksFile
    .split('\n')
    .map((line) => {
      if (line === '') return line;
      const row = JSON.parse(line) as Record<string, unknown>;
      const kept = row.safety === 'warn' || row.safety === 'blocked';
      return JSON.stringify({
        ...row,
        safety: kept ? row.safety : 'unknown',
        safety_reason: kept ? row.safety_reason : RESTORED_SAFETY_REASON,
        safety_checked_at: null,
      });
    })
    .join('\n');
}

/** A source database seeded with `count` links in every state (history included) and its export in `work/name`. */
async function exportedSeed(
  count: number,
  prefix: string,
  name: string,
): Promise<{ source: TestDatabase; dir: string }> {
  const source = await database();
  await seedLinkStates(source.sql, { count, prefix, extras: true });
  const dir = join(work, name);
  await exportEscrow({ sql: source.sql }, { outDir: dir });
  return { source, dir };
}

const codes = [...Array.from({ length: LINKS }, (_, i) => `e${i + 1}`), 'e0', 'unknown1', 'E1'];

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'lifeline-escrow-'));
});
after(async () => {
  for (const db of databases) await db.drop().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

describe('escrow export and restore', () => {
  test('export, drop the database, restore: every code answers exactly as before', async () => {
    const source = await database();
    await seedLinkStates(source.sql, { count: LINKS, prefix: 'e', extras: true });
    await source.sql`INSERT INTO blocklist (pattern, kind, reason, created_by) VALUES ('evil.example', 'host', 'test', 'admin')`;
    // Outgoing webhook endpoints, one mid-rotation: they travel, their secrets never do.
    await source.sql`
      INSERT INTO webhook_endpoints (url, description, event_types, secret, previous_secret, previous_secret_until, created_by)
      VALUES ('https://hooks.example.com/cms', 'CMS', ARRAY['link.created', 'link.deleted'], 'whsec_Y3VycmVudA==',
              'whsec_cHJldmlvdXM=', now() + interval '1 day', 'user:admin@example.test'),
             ('https://hooks.example.com/بوت', 'بوت الأخبار', ARRAY['clicks.daily'], 'whsec_b3RoZXI=', NULL, NULL,
              'apikey:1')`;
    await source.sql`
      INSERT INTO link_last_clicks (code, last_clicked_at)
      SELECT 'e' || i, timestamptz '2026-11-20 10:00:00+00' + make_interval(mins => i) FROM generate_series(1, 50) AS i`;
    // Readers' browser and OS families (migration 0125) travel with the other click aggregates.
    await source.sql`
      INSERT INTO click_families (code, day, browser, os, clicks)
      SELECT 'e' || i, date '2026-11-20' + (i % 3), (ARRAY['chrome', 'safari', 'samsung'])[1 + i % 3],
             (ARRAY['android', 'ios', 'windows'])[1 + i % 3], i
      FROM generate_series(1, 40) AS i`;
    const before = await describeAnswers(createStandaloneAnswerer(configFor(source), source.sql), codes);
    const dir = join(work, 'export-1');
    const exported = await cli('export', ['--out', dir], { DATABASE_URL: source.url });
    assert.equal(exported.code, 0, exported.stderr);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    assert.equal(manifest.counts.links, LINKS);
    assert.equal(manifest.counts.deletedLinks, LINKS / 24);
    assert.deepEqual(
      manifest.files.map((f: { name: string }) => f.name),
      [
        'links.jsonl',
        'vendor_links.jsonl',
        'reports.jsonl',
        'blocklist.jsonl',
        'audit_log.jsonl',
        'click_counts.jsonl',
        'link_last_clicks.jsonl',
        'click_families.jsonl',
        'webhook_endpoints.jsonl',
      ],
    );
    const hooksFile = readFileSync(join(dir, 'webhook_endpoints.jsonl'), 'utf8');
    assert.equal(hooksFile.trimEnd().split('\n').length, 2);
    for (const secret of ['Y3VycmVudA', 'cHJldmlvdXM', 'b3RoZXI', 'secret'])
      assert.ok(!hooksFile.includes(secret), `no secret in the export (${secret})`);
    // Anyone can check the files without our code: `sha256sum -c SHA256SUMS`.
    const sums = readFileSync(join(dir, 'SHA256SUMS'), 'utf8');
    for (const file of manifest.files) assert.ok(sums.includes(`${file.sha256}  ${file.name}`));
    const sourceLines = readFileSync(join(dir, 'links.jsonl'), 'utf8');
    await source.drop();
    databases.splice(databases.indexOf(source), 1);

    const target = await database();
    const restored = await cli('restore', [dir], { DATABASE_URL: target.url });
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stderr, /every file matches its manifest/);
    assert.match(manifest.schema.searchFold, /^[0-9a-f]{32}$/);
    assert.equal(JSON.parse(restored.stdout).searchText, 'exported', restored.stderr);
    assert.match(restored.stderr, /links: 3000 of 3000 rows loaded in \d+\.\d s/);
    assert.match(restored.stderr, /\d+ indexes built in \d+\.\d s/);
    const after = await describeAnswers(createStandaloneAnswerer(configFor(target), target.sql), codes);
    const differ = codes.filter((_, i) => before[i] !== after[i]);
    assert.deepEqual(
      differ.slice(0, 5).map((c) => [before[codes.indexOf(c)], after[codes.indexOf(c)]]),
      [],
    );
    // Routing rules came back with their links (ADR 0080): an Arabic reader of e48 goes to its Arabic target.
    const routed = await createStandaloneAnswerer(configFor(target), target.sql).answer({
      method: 'GET',
      code: 'e48',
      query: '',
      header: (name) => (name === 'accept-language' ? 'ar-EG,ar;q=0.9' : undefined),
    });
    assert.equal(routed.headers.Location, 'https://news.example/ar/e48?utm_source=short');
    assert.equal(routed.headers.Vary, 'Accept-Language');
    // Every column of every row came back (the safety columns as a restore loads them): a new export of the
    // restored database has the same links file.
    const again = join(work, 'export-1-again');
    await exportEscrow({ sql: target.sql }, { outDir: again });
    assert.equal(compacted(readFileSync(join(again, 'links.jsonl'), 'utf8')), asRestored(sourceLines));
    for (const name of [
      'vendor_links',
      'reports',
      'blocklist',
      'click_counts',
      'link_last_clicks',
      'click_families',
    ]) {
      assert.equal(
        readFileSync(join(again, `${name}.jsonl`), 'utf8'),
        readFileSync(join(dir, `${name}.jsonl`), 'utf8'),
        name,
      );
    }
    // Webhook endpoints came back with their URLs, events and descriptions, switched off, each with a new secret.
    const hooks = await target.sql<
      {
        id: number;
        url: string;
        description: string;
        eventTypes: string[];
        enabled: boolean;
        secret: string;
        reason: string | null;
        previous: string | null;
      }[]
    >`SELECT id::int, url, description, event_types AS "eventTypes", enabled, secret, disabled_reason AS reason,
             previous_secret AS previous
      FROM webhook_endpoints ORDER BY id`;
    assert.deepEqual(
      hooks.map((e) => [e.id, e.url, e.description, e.eventTypes, e.enabled, e.previous]),
      [
        [1, 'https://hooks.example.com/cms', 'CMS', ['link.created', 'link.deleted'], false, null],
        [2, 'https://hooks.example.com/بوت', 'بوت الأخبار', ['clicks.daily'], false, null],
      ],
    );
    for (const e of hooks) {
      assert.match(e.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.ok(!['whsec_Y3VycmVudA==', 'whsec_b3RoZXI='].includes(e.secret));
      assert.match(e.reason ?? '', /rotate the secret/);
    }
    assert.equal(new Set(hooks.map((e) => e.secret)).size, 2);
    const [nextHook] = await target.sql`
      INSERT INTO webhook_endpoints (url, event_types, secret, created_by)
      VALUES ('https://hooks.example.com/new', ARRAY['link.created'], 'whsec_bmV3', 't') RETURNING id::int`;
    assert.equal(nextHook!.id, 3, 'new endpoints continue after the restored ids');
    await target.sql`DELETE FROM webhook_endpoints WHERE id = 3`;
    // The audit log came back with its ids, plus one entry saying a restore happened; new ids continue after.
    const audit = readFileSync(join(again, 'audit_log.jsonl'), 'utf8').trimEnd().split('\n');
    assert.equal(audit.length, LINKS + 1);
    assert.match(audit.at(-1)!, /"action":"escrow\.restored"/);
    const [next] = await target.sql`INSERT INTO audit_log (actor, action) VALUES ('t', 't') RETURNING id`;
    assert.equal(next!.id, LINKS + 2);
    // Indexes were rebuilt as the migrations define them.
    const indexes = await target.sql`SELECT indexdef FROM pg_indexes WHERE indexname = 'links_url_trgm_idx'`;
    assert.match(String(indexes[0]?.indexdef), /fastupdate='?off'?/);
  });

  test('an export made before migration 0071 (links.last_clicked_at) restores its last clicks into link_last_clicks', async () => {
    const source = await database();
    await seedLinkStates(source.sql, { count: 48, prefix: 'o', extras: false });
    const dir = join(work, 'export-old');
    await exportEscrow({ sql: source.sql }, { outDir: dir });
    // Rewrite it as the older format was: last_clicked_at a column of links, no link_last_clicks file.
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    const clickedAt: Record<string, string> = {
      o1: '2026-11-20T10:00:00.5+00:00',
      o2: '2026-11-21T11:00:00+00:00',
    };
    const lines = readFileSync(join(dir, 'links.jsonl'), 'utf8').trimEnd().split('\n');
    const oldLinks = `${lines
      .map((line) => {
        const row = JSON.parse(line) as Record<string, unknown>;
        return JSON.stringify({ ...row, last_clicked_at: clickedAt[row.code as string] ?? null });
      })
      .join('\n')}\n`;
    writeFileSync(join(dir, 'links.jsonl'), oldLinks);
    rmSync(join(dir, 'link_last_clicks.jsonl'));
    manifest.files = manifest.files.filter((f: { table: string }) => f.table !== 'link_last_clicks');
    const links = manifest.files.find((f: { table: string }) => f.table === 'links');
    links.columns.push('last_clicked_at');
    links.bytes = Buffer.byteLength(oldLinks);
    links.sha256 = createHash('sha256').update(oldLinks).digest('hex');
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
    writeFileSync(
      join(dir, 'SHA256SUMS'),
      manifest.files.map((f: { sha256: string; name: string }) => `${f.sha256}  ${f.name}\n`).join(''),
    );

    const target = await database();
    const restored = await cli('restore', [dir], { DATABASE_URL: target.url });
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal((await target.sql`SELECT count(*)::int AS n FROM links`)[0]!.n, 48);
    const last = await target.sql<{ code: string; at: Date }[]>`
      SELECT code, last_clicked_at AS at FROM link_last_clicks ORDER BY code`;
    assert.deepEqual(
      last.map((r) => [r.code, r.at.toISOString()]),
      [
        ['o1', '2026-11-20T10:00:00.500Z'],
        ['o2', '2026-11-21T11:00:00.000Z'],
      ],
    );
  });

  test("the links' search text: taken as exported when both fold alike, folded again when a sample disagrees or the folding differs", async () => {
    const source = await database();
    await seedLinkStates(source.sql, { count: 240, prefix: 't', extras: true });
    await source.sql`UPDATE links SET title = 'الإسكندرية: «الطقس» اليوم' WHERE code = 't7'`;
    const dir = join(work, 'export-search');
    await exportEscrow({ sql: source.sql }, { outDir: dir });
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    const original = readFileSync(join(dir, 'links.jsonl'), 'utf8');
    /** Writes the links file and the manifest as given (unsigned), keeping sizes and checksums right. */
    const rewrite = (linksFile: string, searchFold: string | undefined) => {
      writeFileSync(join(dir, 'links.jsonl'), linksFile);
      const links = manifest.files.find((f: { table: string }) => f.table === 'links');
      links.bytes = Buffer.byteLength(linksFile);
      links.sha256 = createHash('sha256').update(linksFile).digest('hex');
      manifest.schema.searchFold = searchFold;
      writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
    };
    const digest = manifest.schema.searchFold as string;
    const restore = async () => {
      const target = await database();
      const summary = await restoreEscrow(
        { sql: target.sql, targetPolicy: createCanonicalTargetPolicy(configFor(target)) },
        { dir },
      );
      const [wrong] = await target.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM links WHERE search_text IS DISTINCT FROM lifeline_search_text(title, target_url)`;
      const found = await target.sql<{ code: string }[]>`
        SELECT code FROM links WHERE search_text LIKE lifeline_search_pattern('الاسكندرية الطقس')`;
      const [trigger] = await target.sql<{ on: string }[]>`
        SELECT tgenabled AS on FROM pg_trigger WHERE tgname = 'links_search_text'`;
      return { summary, wrong: wrong!.n, found: found.map((r) => r.code), trigger: trigger!.on };
    };

    // Same folding: the column is loaded as exported, a sample checked, the trigger on again afterwards.
    const same = await restore();
    assert.deepEqual(same.summary.searchText, { source: 'exported', sampled: 240, mismatched: 0 });
    assert.deepEqual([same.wrong, same.found, same.trigger], [0, ['t7'], 'O']);

    // An export whose search text lies (edited, or folded by other code under the same digest): every link is
    // folded again, so search finds what the title says, not what the file claimed.
    const lying = original.replace(/"search_text":"[^"]*"/g, '"search_text":"nothing"');
    rewrite(lying, digest);
    const refolded = await restore();
    assert.deepEqual(refolded.summary.searchText, { source: 'refolded', sampled: 240, mismatched: 240 });
    assert.deepEqual([refolded.wrong, refolded.found, refolded.trigger], [0, ['t7'], 'O']);

    // Another folding (a later migration changed it) or an export from before the digest: folded row by row.
    for (const fold of ['0'.repeat(32), undefined]) {
      rewrite(lying, fold);
      const other = await restore();
      assert.deepEqual(other.summary.searchText, { source: 'folded', sampled: 0, mismatched: 0 });
      assert.deepEqual([other.wrong, other.found, other.trigger], [0, ['t7'], 'O']);
    }
  });

  test('rows that name a link the export lacks fail the restore after the load, leaving the database as it was', async () => {
    const source = await database();
    await seedLinkStates(source.sql, { count: 48, prefix: 'f', extras: true });
    const [mapped] = await source.sql<
      { code: string }[]
    >`SELECT code FROM vendor_links ORDER BY code LIMIT 1`;
    const dir = join(work, 'export-orphans');
    await exportEscrow({ sql: source.sql }, { outDir: dir });
    // The link of a vendor mapping taken out of links.jsonl, the manifest made to match (unsigned).
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    const linksFile = `${readFileSync(join(dir, 'links.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .filter((line) => JSON.parse(line).code !== mapped!.code)
      .join('\n')}\n`;
    writeFileSync(join(dir, 'links.jsonl'), linksFile);
    const links = manifest.files.find((f: { table: string }) => f.table === 'links');
    Object.assign(links, {
      rows: links.rows - 1,
      bytes: Buffer.byteLength(linksFile),
      sha256: createHash('sha256').update(linksFile).digest('hex'),
    });
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
    const target = await database();
    const refused = await cli('restore', [dir], { DATABASE_URL: target.url });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(
      refused.stderr,
      new RegExp(
        `the export's rows do not hold together: .*vendor_links_code_fkey.*\\(code\\)=\\(${mapped!.code}\\)`,
      ),
    );
    const [left] = await target.sql<{ links: number; keys: number; indexes: number; note: number }[]>`
      SELECT (SELECT count(*) FROM links)::int AS links,
             (SELECT count(*) FROM pg_constraint WHERE conname IN ('vendor_links_code_fkey', 'reports_code_fkey'))::int AS keys,
             (SELECT count(*) FROM pg_indexes WHERE indexname = 'links_url_trgm_idx')::int AS indexes,
             (SELECT count(*) FROM settings WHERE key = 'restore_pending_indexes')::int AS note`;
    assert.deepEqual(left, { links: 0, keys: 2, indexes: 1, note: 0 });
  });

  test('a restore stopped while building its indexes is finished by running it again', async () => {
    const { dir } = await exportedSeed(240, 'i', 'export-indexes');
    const target = await database();
    const first = await cli('restore', [dir, '--index-jobs', '3'], { DATABASE_URL: target.url });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /index links_url_trgm_idx built in \d+\.\d s/);
    const [note] =
      await target.sql`SELECT count(*)::int AS n FROM settings WHERE key = 'restore_pending_indexes'`;
    assert.equal(note!.n, 0, 'no note once every index exists');
    // As the restore leaves a database it was stopped in: rows committed, two indexes still to build, the note.
    const dropped = await target.sql<{ name: string; definition: string }[]>`
      SELECT indexname AS name, indexdef AS definition FROM pg_indexes
      WHERE indexname IN ('links_url_trgm_idx', 'audit_log_code_idx') ORDER BY indexname`;
    assert.equal(dropped.length, 2);
    for (const index of dropped) await target.sql.unsafe(`DROP INDEX ${index.name}`);
    await target.sql`
      INSERT INTO settings (key, value)
      VALUES ('restore_pending_indexes', ${target.sql.json({ since: '2026-12-03T04:00:00Z', source: dir, indexes: [...dropped] })})`;
    await assert.rejects(
      restoreEscrow(
        { sql: target.sql, targetPolicy: createCanonicalTargetPolicy(configFor(target)) },
        { dir, force: true },
      ),
      /holds a restore \(of .*export-indexes, committed 2026-12-03T04:00:00Z\) whose index builds did not finish \(2 indexes\)/,
    );
    const again = await cli('restore', [dir], { DATABASE_URL: target.url });
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stderr,
      /held a restore of .*export-indexes whose index builds had not finished: 2 built now/,
    );
    const rebuilt = await target.sql`
      SELECT indexname AS name, indexdef AS definition FROM pg_indexes
      WHERE indexname IN ('links_url_trgm_idx', 'audit_log_code_idx') ORDER BY indexname`;
    assert.deepEqual(rebuilt, dropped);
    const [left] =
      await target.sql`SELECT count(*)::int AS n FROM settings WHERE key = 'restore_pending_indexes'`;
    assert.equal(left!.n, 0);
    assert.equal((await target.sql`SELECT count(*)::int AS n FROM links`)[0]!.n, 240, 'nothing loaded twice');
    const badJobs = await cli('restore', [dir, '--index-jobs', '0'], { DATABASE_URL: target.url });
    assert.equal(badJobs.code, 2);
    assert.match(badJobs.stderr, /--index-jobs must be a whole number from 1 to 16/);
  });

  test('a restore killed after its links committed is undone by the next one, which then restores', async () => {
    const { dir } = await exportedSeed(120, 'k', 'export-killed');
    const target = await database();
    assert.equal((await cli('restore', [dir], { DATABASE_URL: target.url })).code, 0);
    const shape = async () => {
      const [row] = await target.sql<{ indexes: string[]; keys: string[] }[]>`
        SELECT (SELECT array_agg(indexname::text ORDER BY indexname) FROM pg_indexes WHERE schemaname = 'public') AS indexes,
               (SELECT array_agg(conname::text ORDER BY conname) FROM pg_constraint WHERE contype = 'f') AS keys`;
      return row!;
    };
    const whole = await shape();
    const counts = async () =>
      (
        await target.sql<{ links: number; vendor: number; audit: number }[]>`
          SELECT (SELECT count(*) FROM links)::int AS links, (SELECT count(*) FROM vendor_links)::int AS vendor,
                 (SELECT count(*) FROM audit_log)::int AS audit`
      )[0]!;
    const restored = await counts();
    // As a restore killed in its second transaction leaves the database: the links committed, the other tables
    // empty, the indexes and the foreign keys dropped, and the note saying the load is under way.
    const indexes = await target.sql<{ name: string; definition: string; table: string }[]>`
      SELECT indexname AS name, indexdef AS definition, tablename AS table FROM pg_indexes
      WHERE indexname IN ('links_url_trgm_idx', 'audit_log_code_idx')`;
    const keys = await target.sql<{ table: string; name: string; definition: string }[]>`
      SELECT r.relname AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
      FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
      WHERE c.contype = 'f' AND c.conname IN ('vendor_links_code_fkey', 'reports_code_fkey')`;
    assert.equal(indexes.length, 2);
    assert.equal(keys.length, 2);
    for (const index of indexes) await target.sql.unsafe(`DROP INDEX ${index.name}`);
    for (const key of keys) await target.sql.unsafe(`ALTER TABLE ${key.table} DROP CONSTRAINT ${key.name}`);
    await target.sql`TRUNCATE vendor_links, reports, audit_log, click_counts, link_last_clicks, click_families, webhook_endpoints CASCADE`;
    await target.sql`
      INSERT INTO settings (key, value)
      VALUES ('restore_pending_indexes', ${target.sql.json({ since: '2026-12-03T04:00:00Z', source: dir, indexes: [...indexes], foreignKeys: [...keys], loading: true })})`;
    assert.equal(
      await finishPendingIndexes(target.sql),
      null,
      'an unfinished load is never finished as if its rows were all there',
    );
    // While another restore holds its lock (this one's load is then its own, not a killed one's), nothing is undone.
    const other = await target.sql.reserve();
    await other`SELECT pg_advisory_lock(7241865325823967)`;
    const refused = await cli('restore', [dir], { DATABASE_URL: target.url });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /another restore into this database is running/);
    assert.equal((await counts()).links, restored.links, 'the other restore’s links are left alone');
    await other`SELECT pg_advisory_unlock(7241865325823967)`;
    other.release();
    const again = await cli('restore', [dir], { DATABASE_URL: target.url });
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stderr,
      /an earlier restore \(of .*export-killed, begun 2026-12-03T04:00:00Z\) stopped before its last table loaded: its rows were removed/,
    );
    assert.deepEqual(await counts(), restored);
    assert.deepEqual(await shape(), whole);
    const [note] =
      await target.sql`SELECT count(*)::int AS n FROM settings WHERE key = 'restore_pending_indexes'`;
    assert.equal(note!.n, 0);
  });

  test('a row the database refuses fails the restore naming its line, leaving the database as it was', async () => {
    const { dir } = await exportedSeed(60, 'b', 'export-bad-row');
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    const rewrite = (name: string, edit: (lines: string[]) => void) => {
      const lines = readFileSync(join(dir, name), 'utf8').trimEnd().split('\n');
      edit(lines);
      const text = `${lines.join('\n')}\n`;
      writeFileSync(join(dir, name), text);
      Object.assign(
        manifest.files.find((f: { name: string }) => f.name === name),
        { bytes: Buffer.byteLength(text), sha256: createHash('sha256').update(text).digest('hex') },
      );
    };
    // Line 3 breaks the code rule (left out and counted); line 7 has a time no database takes.
    rewrite('links.jsonl', (lines) => {
      lines[2] = JSON.stringify({ ...JSON.parse(lines[2]!), code: 'no_such code' });
      lines[6] = JSON.stringify({ ...JSON.parse(lines[6]!), created_at: 'yesterday-ish' });
    });
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
    const target = await database();
    const refused = await cli('restore', [dir], { DATABASE_URL: target.url });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /links\.jsonl line 7: the database refused it: .*yesterday-ish/);
    const [left] = await target.sql<{ links: number; indexes: number; note: number }[]>`
      SELECT (SELECT count(*) FROM links)::int AS links,
             (SELECT count(*) FROM pg_indexes WHERE indexname = 'links_url_trgm_idx')::int AS indexes,
             (SELECT count(*) FROM settings WHERE key = 'restore_pending_indexes')::int AS note`;
    assert.deepEqual(left, { links: 0, indexes: 1, note: 0 });
  });

  test('refusals: a changed file, a non-empty database, a non-empty export directory, bad flags', async () => {
    const source = await database();
    await seedLinkStates(source.sql, { count: 240, prefix: 'r', extras: true });
    const dir = join(work, 'export-2');
    assert.equal((await cli('export', ['--out', dir], { DATABASE_URL: source.url })).code, 0);

    const notEmpty = await cli('export', ['--out', dir], { DATABASE_URL: source.url });
    assert.equal(notEmpty.code, 1);
    assert.match(notEmpty.stderr, /is not empty .* an export goes into a new or empty directory/);
    const usage = await cli('export', ['--bogus'], { DATABASE_URL: source.url });
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /Unknown option '--bogus'[\s\S]*usage: npm run export/);
    assert.equal((await cli('export', [], { DATABASE_URL: source.url })).code, 2);
    for (const jobs of ['0', '10', '1.5']) {
      const badJobs = await cli('export', ['--out', join(work, 'export-jobs'), '--jobs', jobs], {
        DATABASE_URL: source.url,
      });
      assert.equal(badJobs.code, 2, jobs);
      assert.match(badJobs.stderr, /--jobs must be a whole number from 1 to 9/);
    }

    const nonEmpty = await cli('restore', [dir], { DATABASE_URL: source.url });
    assert.equal(nonEmpty.code, 1);
    assert.match(nonEmpty.stderr, /the database is not empty \(240 links, .*\); .* restore with --force/);

    const tampered = join(work, 'export-2-tampered');
    cpSync(dir, tampered, { recursive: true });
    const lines = readFileSync(join(tampered, 'links.jsonl'), 'utf8').replace('"r1"', '"r!"');
    writeFileSync(join(tampered, 'links.jsonl'), lines);
    const target = await database();
    const refused = await cli('restore', [tampered], { DATABASE_URL: target.url });
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /does not match its manifest:\n {2}links\.jsonl: SHA-256 [0-9a-f]{64}, the manifest says/,
    );
    const [{ n }] = (await target.sql`SELECT count(*)::int AS n FROM links`) as unknown as [{ n: number }];
    assert.equal(n, 0, 'nothing loaded from a refused export');

    const missing = await cli('restore', [join(work, 'nowhere')], { DATABASE_URL: target.url });
    assert.match(missing.stderr, /nowhere does not exist/);
    mkdirSync(join(work, 'half'));
    const unfinished = await cli('restore', [join(work, 'half')], { DATABASE_URL: target.url });
    assert.match(
      unfinished.stderr,
      /no manifest\.json .*: not an escrow export, or an export that did not finish/,
    );
    const truncated = join(work, 'export-2-truncated');
    cpSync(dir, truncated, { recursive: true });
    writeFileSync(join(truncated, 'vendor_links.jsonl'), '');
    assert.match(
      (await cli('restore', [truncated], { DATABASE_URL: target.url })).stderr,
      /vendor_links\.jsonl: 0 bytes, the manifest says \d+/,
    );
    assert.equal((await cli('restore', [], { DATABASE_URL: target.url })).code, 2);

    // An export from a newer Lifeline (a migration this database lacks), or with columns its tables lack.
    const newer = join(work, 'export-2-newer');
    cpSync(dir, newer, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(newer, 'manifest.json'), 'utf8'));
    writeFileSync(
      join(newer, 'manifest.json'),
      JSON.stringify({ ...manifest, schema: { lastMigration: '9999_from_the_future' } }),
    );
    assert.match(
      (await cli('restore', [newer], { DATABASE_URL: target.url })).stderr,
      /the export was made by a newer Lifeline \(its schema ends at 9999_from_the_future/,
    );
    manifest.files[0].columns.push('colour');
    writeFileSync(join(newer, 'manifest.json'), JSON.stringify(manifest));
    assert.match(
      (await cli('restore', [newer], { DATABASE_URL: target.url })).stderr,
      /links\.jsonl has columns this database lacks: colour/,
    );
    const [{ n: still }] = (await target.sql`SELECT count(*)::int AS n FROM links`) as unknown as [
      { n: number },
    ];
    assert.equal(still, 0);
  });

  test('a merge into a database that has links adds free codes and never changes an existing one', async () => {
    const live = await database();
    // The live database deleted `m1` (its code answers 410 forever) and holds `m2`.
    await live.sql`
      INSERT INTO links (code, target_url, status, origin, owner, deleted_at) VALUES
        ('m1', 'https://news.example/original', 'gone', 'api', 'live', now()),
        ('m2', 'https://news.example/live', 'active', 'api', 'live', NULL)`;
    const other = await database();
    await other.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner) VALUES
        ('m1', 'https://elsewhere.example/hijack', 'active', 'clean', 'api', 'other'),
        ('m2', 'https://elsewhere.example/two', 'active', 'clean', 'api', 'other'),
        ('m3', 'https://news.example/three', 'active', 'clean', 'api', 'other')`;
    await other.sql`
      INSERT INTO vendor_links (code, vendor, vendor_id, state) VALUES
        ('m1', 'bitly', 'sho.rt/m1', 'synced'), ('m3', 'bitly', 'sho.rt/m3', 'synced')`;
    const dir = join(work, 'export-3');
    assert.equal((await cli('export', ['--out', dir], { DATABASE_URL: other.url })).code, 0);
    const merged = await cli('restore', [dir, '--force'], { DATABASE_URL: live.url });
    assert.equal(merged.code, 0, merged.stderr);
    assert.match(
      merged.stderr,
      /2 links of the export were already in the database and left unchanged \(e\.g\. m1, m2\)/,
    );
    const rows =
      await live.sql`SELECT code, target_url, status, deleted_at IS NOT NULL AS deleted FROM links ORDER BY code`;
    assert.deepEqual(
      rows.map((r) => [r.code, r.target_url, r.status, r.deleted]),
      [
        ['m1', 'https://news.example/original', 'gone', true],
        ['m2', 'https://news.example/live', 'active', false],
        ['m3', 'https://news.example/three', 'active', false],
      ],
    );
    const vendors = await live.sql`SELECT code FROM vendor_links ORDER BY code`;
    assert.deepEqual(
      vendors.map((v) => v.code),
      ['m3'],
      'a skipped code gets none of the export rows',
    );
    const answers = await describeAnswers(createStandaloneAnswerer(configFor(live), live.sql), [
      'm1',
      'm2',
      'm3',
    ]);
    assert.deepEqual(answers, [
      'm1 410 -',
      'm2 301 https://news.example/live?utm_source=short',
      'm3 301 https://news.example/three?utm_source=short',
    ]);
  });

  test('one snapshot, shared by its readers: writes committed while an export runs are in none of them', async () => {
    const db = await database();
    await seedLinkStates(db.sql, { count: 48, prefix: 's', extras: true });
    const seen = await withEscrowSnapshot(db.sql, async (snapshot) => {
      // Another connection commits after the snapshot began: a new link with its mapping, and an edit.
      await db.sql.begin(async (tx) => {
        await tx`INSERT INTO links (code, target_url, status, origin, owner) VALUES ('zz-late', 'https://late.example/', 'active', 'api', 't')`;
        await tx`INSERT INTO vendor_links (code, vendor, state) VALUES ('zz-late', 'bitly', 'pending')`;
        await tx`UPDATE links SET target_url = 'https://changed.example/' WHERE code = 's1'`;
      });
      const read: Record<string, string[]> = {};
      const readAll = async (reader: EscrowReader, table: 'links' | 'vendor_links') => {
        read[table] = [];
        for await (const piece of reader.streamLines(table, 256)) {
          read[table].push(...piece.lines.toString('utf8').split('\n').filter(Boolean));
        }
      };
      // links on the snapshot's own connection, vendor_links on another that shares it (the export's jobs).
      assert.equal(snapshot.shareable, true);
      await Promise.all([
        readAll(snapshot, 'links'),
        snapshot.shareSnapshot((other) => readAll(other, 'vendor_links')),
      ]);
      return { read, counts: snapshot.linkCounts.total };
    });
    assert.equal(seen.counts, 48);
    assert.equal(seen.read.links!.length, 48);
    assert.ok(!seen.read.links!.some((l) => l.includes('zz-late') || l.includes('changed.example')));
    assert.ok(!seen.read.vendor_links!.some((l) => l.includes('zz-late')));
  });

  test('a fresh install restores onto the embedded database (no DATABASE_URL), then exports the same links', async () => {
    const source = await database();
    await seedLinkStates(source.sql, { count: 96, prefix: 'p', extras: true });
    const dir = join(work, 'export-4');
    assert.equal((await cli('export', ['--out', dir], { DATABASE_URL: source.url })).code, 0);
    const dataDir = join(work, 'fresh-install');
    const noDatabase = await cli('export', ['--out', join(work, 'export-5')], { LIFELINE_DATA_DIR: dataDir });
    assert.equal(noDatabase.code, 1);
    assert.match(noDatabase.stderr, /no database: DATABASE_URL is not set and there is no embedded database/);
    const restored = await cli('restore', [dir], { LIFELINE_DATA_DIR: dataDir });
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stderr, /restoring into the embedded database/);
    const back = await cli('export', ['--out', join(work, 'export-5'), '--links-only'], {
      LIFELINE_DATA_DIR: dataDir,
    });
    assert.equal(back.code, 0, back.stderr);
    assert.equal(
      compacted(readFileSync(join(work, 'export-5', 'links.jsonl'), 'utf8')),
      asRestored(readFileSync(join(dir, 'links.jsonl'), 'utf8')),
    );
  });
});
