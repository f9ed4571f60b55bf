import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { isPossibleLinkKey } from '../../lib/codes/code_rules.ts';
import { exportEscrow } from '../../lib/escrow/export_escrow.ts';
import { restoreEscrow } from '../../lib/escrow/restore_escrow.ts';
import { verifyEscrow } from '../../lib/escrow/verify_escrow.ts';
import { type Config, parseConfig } from '../../lib/shared/config.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { writeSnapshotFiles } from '../../lib/snapshot/write_snapshot.ts';
import type { Sql } from '../../lib/stores/sql.ts';
import { createCanonicalTargetPolicy, targetRuleProblem } from '../../lib/targets/target_rule.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import {
  canonicalTargetUrlArbitrary,
  HOSTILE_POLICY,
  HOSTILE_STRINGS,
  HOSTILE_TARGETS,
  hostileStringArbitrary,
  mutatedTargetUrlArbitrary,
  targetUrlArbitrary,
} from '../helpers/hostile_inputs.ts';
import { NGINX, startNginx } from '../helpers/nginx.ts';

// The hostile suite for the archive surfaces: rows that reached the database (or an escrow file) around every way
// in — codes that climb out of a folder or carry a newline, targets that break the target rule or nginx's
// configuration syntax, vendor ids of any shape — fed through the static snapshot and the escrow restore. Whatever
// comes out obeys the code rule and the target rule; the rest is skipped and counted; nothing is written outside
// the output folder, no extra rule appears, and nginx accepts the generated configuration. Counts go to the test
// output (t.diagnostic). HOSTILE_SEED=<n> reruns a seed; HOSTILE_ARCHIVE_RUNS=<n> changes the generated rows.

const SEED = Number(process.env.HOSTILE_SEED ?? 13_2026);
const RUNS = Math.max(50, Number(process.env.HOSTILE_ARCHIVE_RUNS ?? 300));
const policy = createCanonicalTargetPolicy(HOSTILE_POLICY);
const SIGNING_KEY = 'k'.repeat(24) + createHash('sha256').update('archive').digest('hex').slice(0, 24);

/** Codes that must never name a file, a `_redirects` rule or an nginx map key, with why each hurts. */
const HOSTILE_CODES: readonly { code: string; why: string }[] = [
  { code: '../../../../x', why: 'climbs out of the warn-page folder' },
  { code: '../../../../../../escaped', why: 'climbs further, out of the snapshot' },
  // (One slash and a host name before it is another short domain's key, written under domains/<name>/: ADR 0078.)
  { code: 'a/b/c', why: 'folders that do not exist' },
  { code: 'a\nb', why: 'a newline: a second _redirects rule' },
  { code: 'z\n/evil  https://evil.example/  301', why: 'a newline carrying a whole rule' },
  { code: 'a b', why: 'a space: _redirects splits on white space' },
  { code: 'sp ace  https://evil.example/  302', why: 'a rule inside one code' },
  { code: 'x\t', why: 'a tab' },
  { code: 'a"b', why: 'closes an nginx string' },
  { code: 'a;b', why: 'ends an nginx directive' },
  { code: 'a$b', why: 'an nginx variable' },
  { code: 'a\\b', why: 'an nginx escape' },
  { code: 'a{b}', why: 'an nginx block' },
  { code: '_lifeline', why: 'the snapshot\u2019s own namespace' },
  { code: 'api', why: 'a reserved word' },
  { code: 'HealthZ', why: 'a reserved word in another case' },
  { code: '', why: 'empty' },
  { code: '.', why: 'the folder itself' },
  { code: '..', why: 'the parent folder' },
  { code: 'é', why: 'not in the code alphabet' },
  { code: 'a\u202eb', why: 'a bidi override: a log line reads backwards' },
  { code: 'a\u2028b', why: 'a JavaScript line terminator' },
  { code: 'x'.repeat(65), why: 'longer than any code' },
  { code: '%2e%2e', why: 'an encoded parent folder' },
];

/** A target that stays on the allowed host and is canonical, for rows whose code is the hostile part. */
const PLAIN_TARGET = 'https://news.example/plain';
/** Canonical targets full of characters nginx's configuration syntax gives a meaning to. */
const CONFIG_HOSTILE_TARGETS = [
  "https://news.example/x;$y'z/",
  "https://news.example/semi;colon?q=$1;e=ok#f;'$",
  "https://news.example/q;x='$1'?a=$1&d={z};e=%27f%27#frag;'$",
];
/** Targets that break the target rule and, written raw, nginx's syntax or a `_redirects` line. */
const SYNTAX_BREAKING_TARGETS = [
  'https://news.example/a\nb',
  'https://news.example/a\r\nLocation: https://evil.example/',
  'https://news.example/a"b',
  'https://news.example/a";\n}\nserver { listen 1; }\n#',
  'https://news.example/a b  302',
  'https://news.example/a\\b',
];

/** Postgres text holds neither NUL nor lone surrogates: such rows cannot be in a database to begin with. */
const storable = (s: string) =>
  !s.includes('\u0000') && !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

/** The links table holds targets and fallbacks of at most 2,048 bytes (a CHECK): longer ones cannot be stored. */
const fitsTheTable = (row: Row) =>
  Buffer.byteLength(row.target) <= 2048 &&
  (row.expiredUrl === null || Buffer.byteLength(row.expiredUrl) <= 2048);

interface Row {
  code: string;
  target: string;
  expiredUrl: string | null;
  status: 'active' | 'expired';
  safety: 'clean' | 'warn';
}

/** What the code rule (a key: a code, or a host name, a slash and a code) and the target rule let through. */
const servable = (row: Row) =>
  isPossibleLinkKey(row.code) &&
  targetRuleProblem(row.target, policy) === null &&
  (row.expiredUrl === null || targetRuleProblem(row.expiredUrl, policy) === null);

/** The hand-written hostile rows, and whether each must survive. */
function writtenRows(): { row: Row; keep: boolean }[] {
  const rows: { row: Row; keep: boolean }[] = [];
  for (const [i, { code }] of HOSTILE_CODES.entries()) {
    // Warn links get a page file named after the code: the traversal codes aim at it.
    const safety = code.includes('/') ? 'warn' : 'clean';
    rows.push({
      row: { code, target: PLAIN_TARGET, expiredUrl: null, status: 'active', safety },
      keep: false,
    });
    rows.push({
      row: { code: `ok-${i}`, target: PLAIN_TARGET, expiredUrl: null, status: 'active', safety },
      keep: true,
    });
  }
  for (const [i, h] of HOSTILE_TARGETS.entries()) {
    if (!storable(h.input)) continue;
    const keep = h.expect.kind === 'accept' && h.expect.url === h.input;
    rows.push({
      row: {
        code: `t${i}`,
        target: h.input,
        expiredUrl: null,
        status: 'active',
        safety: i % 5 ? 'clean' : 'warn',
      },
      keep,
    });
  }
  for (const [i, target] of CONFIG_HOSTILE_TARGETS.entries()) {
    rows.push({
      row: { code: `cfg${i}`, target, expiredUrl: null, status: 'active', safety: 'clean' },
      keep: true,
    });
  }
  for (const [i, target] of SYNTAX_BREAKING_TARGETS.entries()) {
    rows.push({
      row: { code: `brk${i}`, target, expiredUrl: null, status: 'active', safety: 'clean' },
      keep: false,
    });
    // The same as an expired link's fallback, which the snapshot sends as a Location too.
    rows.push({
      row: { code: `brkx${i}`, target: PLAIN_TARGET, expiredUrl: target, status: 'expired', safety: 'clean' },
      keep: false,
    });
  }
  rows.push({
    row: {
      code: 'offx',
      target: PLAIN_TARGET,
      expiredUrl: 'https://evil.example/',
      status: 'expired',
      safety: 'clean',
    },
    keep: false,
  });
  return rows;
}

/** Generated rows: hostile or random codes and destinations, most of them not servable. */
function generatedRows(taken: Set<string>): { row: Row; keep: boolean }[] {
  const rows: { row: Row; keep: boolean }[] = [];
  const code = fc.oneof(
    { arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), weight: 3 },
    { arbitrary: hostileStringArbitrary(), weight: 2 },
    { arbitrary: fc.constantFrom(...HOSTILE_STRINGS.map((s) => s.value)), weight: 1 },
  );
  const target = fc.oneof(targetUrlArbitrary(), mutatedTargetUrlArbitrary(), canonicalTargetUrlArbitrary());
  for (const [c, t, warn, fallback] of fc.sample(
    fc.tuple(code, target, fc.boolean(), fc.option(target, { freq: 4 })),
    {
      seed: SEED,
      numRuns: RUNS,
    },
  )) {
    if (taken.has(c) || !storable(c) || !storable(t) || (fallback !== null && !storable(fallback))) continue;
    taken.add(c);
    const row: Row = {
      code: c,
      target: t,
      expiredUrl: fallback,
      status: fallback === null ? 'active' : 'expired',
      safety: warn ? 'warn' : 'clean',
    };
    rows.push({ row, keep: servable(row) });
  }
  return rows;
}

async function insertRows(sql: Sql, rows: Row[]): Promise<void> {
  // A tampered database: the key check of migrations/0100_links_short_domain.sql already refuses a code with
  // more than one `/` (or one whose domain part is not the row's domain), so it is dropped here, as whoever
  // tampered would have: the snapshot writers must hold without it.
  await sql`ALTER TABLE links DROP CONSTRAINT IF EXISTS links_domain_key_check`;
  for (const row of rows) {
    await sql`
      INSERT INTO links (code, target_url, expired_url, status, safety, origin, owner, expires_at)
      VALUES (${row.code}, ${row.target}, ${row.expiredUrl}, ${row.status}, ${row.safety}, 'api', 'hostile',
              ${row.status === 'expired' ? new Date(Date.now() - 86_400_000) : null})`;
  }
}

/** Every file under `dir`, relative to it. */
function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(relative(dir, join(entry.parentPath, entry.name)));
  }
  return out.sort();
}

/** A logger whose lines are kept (JSON, one per line). */
function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ level: 'info', destination }), lines };
}

/** Printable ASCII lines only: no raw newline, control, bidi or line-separator character inside a line. */
const PRINTABLE_LINES = /^[\x20-\x7e\n]*$/;

function cli(
  script: 'snapshot' | 'export' | 'restore',
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'scripts', `${script}.ts`), ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
      },
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
    SHORT_BASE_URL: HOSTILE_POLICY.shortBaseUrl,
    ALLOWED_TARGET_HOSTS: HOSTILE_POLICY.allowedTargetHosts.join(','),
  });
const envFor = (db: TestDatabase): Record<string, string> => ({
  DATABASE_URL: db.url,
  SHORT_BASE_URL: HOSTILE_POLICY.shortBaseUrl,
  ALLOWED_TARGET_HOSTS: HOSTILE_POLICY.allowedTargetHosts.join(','),
});

before(() => {
  work = mkdtempSync(join(tmpdir(), 'lifeline-hostile-archive-'));
  // nginx started by root serves files as `nobody`: the snapshot's parents must be searchable by others.
  chmodSync(work, 0o755);
});
after(async () => {
  for (const db of databases) await db.drop().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

describe('hostile rows in the static snapshot', () => {
  let db: TestDatabase;
  let written: { row: Row; keep: boolean }[];
  let generated: { row: Row; keep: boolean }[];

  before(async () => {
    db = await database();
    written = writtenRows().filter((w) => fitsTheTable(w.row));
    generated = generatedRows(new Set(written.map((w) => w.row.code))).filter((w) => fitsTheTable(w.row));
    await insertRows(
      db.sql,
      [...written, ...generated].map((w) => w.row),
    );
  });

  test('every format holds the servable rows only; nothing lands outside the folder; nginx accepts the config', async (t) => {
    const config = configFor(db);
    const sandbox = join(work, 'snap', 'a', 'b');
    mkdirSync(sandbox, { recursive: true });
    chmodSync(join(work, 'snap'), 0o755);
    chmodSync(join(work, 'snap', 'a'), 0o755);
    chmodSync(sandbox, 0o755);
    const outDir = join(sandbox, 'out');
    const port = await getFreePort();
    const { logger, lines } = capturingLogger();
    const summary = await writeSnapshotFiles(
      { sql: db.sql, logger },
      {
        outDir,
        formats: ['nginx', 'redirects', 'json'],
        shortBaseUrl: config.shortBaseUrl,
        redirect: config.redirect,
        targetPolicy: createCanonicalTargetPolicy(config),
        listen: `127.0.0.1:${port}`,
      },
    );
    const all = [...written, ...generated];
    const kept = new Set(all.filter((w) => w.keep).map((w) => w.row.code));
    const refused = all.filter((w) => !w.keep);

    // Nothing outside the snapshot's own folder.
    const escaped = listFiles(join(work, 'snap')).filter((f) => !f.startsWith('a/b/out/'));
    assert.deepEqual(escaped, [], 'files written outside the snapshot folder');

    // `_redirects`: one well-formed rule per servable code, and nothing else.
    const rules = readFileSync(join(outDir, 'redirects', '_redirects'), 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'));
    const badRules = rules.filter(
      (l) => !/^\/[A-Za-z0-9_-]{1,64} {2}[\x21-\x7e]+ {2}(200|30[1278]|410|451)$/.test(l),
    );
    assert.deepEqual(badRules.slice(0, 5), [], `${badRules.length} malformed _redirects lines`);
    const ruleCodes = new Set(rules.map((l) => l.slice(1, l.indexOf(' '))));
    assert.deepEqual(
      [...kept].filter((c) => !ruleCodes.has(c)),
      [],
      'every servable code has its rule',
    );
    assert.deepEqual(
      [...ruleCodes].filter((c) => !kept.has(c)),
      [],
      'no rule for a refused row',
    );
    assert.equal(rules.length, kept.size);

    // nginx: one well-formed map entry per servable code; `nginx -t` accepts the whole configuration.
    const entries = readFileSync(join(outDir, 'nginx', 'lifeline_map_entries.conf'), 'utf8')
      .split('\n')
      .filter(Boolean);
    const badEntries = entries.filter(
      (l) => !/^"\/[A-Za-z0-9_-]{1,64} [01]+" "\d{3}:\d+:[^"\\\s]+";$/.test(l),
    );
    assert.deepEqual(badEntries.slice(0, 5), [], `${badEntries.length} malformed nginx map entries`);
    assert.equal(entries.length, kept.size);
    const prefix = join(work, 'nginx-prefix');
    mkdirSync(join(prefix, 'logs'), { recursive: true });
    const checked = spawnSync(
      NGINX,
      ['-t', '-p', prefix, '-e', 'stderr', '-c', join(outDir, 'nginx', 'nginx.conf')],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(checked.status, 0, `nginx -t: ${checked.stderr}`);

    // The key-value JSON: the servable codes and the meta entry.
    const keys: string[] = [];
    for (const file of readdirSync(join(outDir, 'json'))) {
      for (const pair of JSON.parse(readFileSync(join(outDir, 'json', file), 'utf8')) as { key: string }[])
        keys.push(pair.key);
    }
    assert.deepEqual(
      keys.filter((k) => k !== '_lifeline_snapshot' && !kept.has(k)),
      [],
    );
    assert.equal(keys.length, kept.size + 1);

    // Counted in the result, the manifest and one log line; no raw hostile value in any log line.
    const codeRule = refused.filter((w) => !isPossibleLinkKey(w.row.code)).length;
    assert.deepEqual(
      { codeRule: summary.refused?.codeRule, targetRule: summary.refused?.targetRule },
      { codeRule, targetRule: refused.length - codeRule },
    );
    const manifest = JSON.parse(readFileSync(join(outDir, 'snapshot.json'), 'utf8'));
    assert.equal(manifest.refused.codeRule + manifest.refused.targetRule, refused.length);
    assert.ok(
      lines.some((l) => /rows the snapshot refused/.test(l) && l.includes(`"codeRule":${codeRule}`)),
      lines.join('\n'),
    );
    for (const line of lines) assert.match(line, PRINTABLE_LINES);

    // nginx serves what it holds, byte for byte, however many `;`, `$` and `'` a Location has.
    const nginx = await startNginx({ prefix, configPath: join(outDir, 'nginx', 'nginx.conf'), port });
    try {
      for (const [i, target] of CONFIG_HOSTILE_TARGETS.entries()) {
        const res = await fetch(`http://127.0.0.1:${port}/cfg${i}`, { redirect: 'manual' });
        assert.equal(res.status, 301);
        assert.equal(res.headers.get('location'), target);
      }
      assert.equal((await fetch(`http://127.0.0.1:${port}/brk0`, { redirect: 'manual' })).status, 404);
    } finally {
      await nginx.stop();
    }
    t.diagnostic(
      `snapshot: ${all.length} hostile rows (${written.length} written, ${generated.length} generated), ` +
        `${kept.size} servable kept, ${codeRule} refused by the code rule, ${refused.length - codeRule} by the ` +
        `target rule; 0 files outside, 0 extra rules, nginx -t ok`,
    );
  });

  test('the CLI reports the refused rows in printable lines', async () => {
    const out = join(work, 'snap-cli');
    const run = await cli('snapshot', ['--format', 'redirects', '--out', out], envFor(db));
    assert.equal(run.code, 0, run.stderr);
    const refusedLine = run.stderr.split('\n').find((l) => /^\d+ rows refused: /.test(l));
    assert.match(String(refusedLine), /^\d+ rows refused: \d+ by the code rule, \d+ by the target rule/);
    // The hostile codes it names are quoted and escaped: the line stays one line of printable ASCII.
    assert.match(String(refusedLine), /^[\x20-\x7e]+$/);
    assert.match(String(refusedLine), /\\u/);
    assert.match(run.stdout, /"refused":\{"codeRule":\d+,"targetRule":\d+/);
  });
});

/** An export's files after an edit: sizes, SHA-256s and line counts as the manifest wants them. */
function rewriteExport(dir: string, edit: (table: string, lines: string[]) => string[]): void {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  for (const file of manifest.files) {
    const path = join(dir, file.name);
    const before = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    const lines = edit(file.table, before);
    const text = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
    writeFileSync(path, text);
    file.rows = lines.length;
    file.bytes = Buffer.byteLength(text);
    file.sha256 = createHash('sha256').update(text).digest('hex');
  }
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(
    join(dir, 'SHA256SUMS'),
    manifest.files.map((f: { sha256: string; name: string }) => `${f.sha256}  ${f.name}\n`).join(''),
  );
}

describe('hostile rows in an escrow restore', () => {
  let source: TestDatabase;
  const GOOD = 12;

  before(async () => {
    source = await database();
    for (let i = 1; i <= GOOD; i++) {
      await source.sql`
        INSERT INTO links (code, target_url, status, safety, safety_reason, safety_checked_at, origin, owner)
        VALUES (${`g${i}`}, ${`https://news.example/story/${i}`}, 'active',
                ${i === 1 ? 'blocked' : i === 2 ? 'warn' : 'clean'}, ${i <= 2 ? 'reported' : null}, now(), 'api', 't')`;
    }
    await source.sql`
      INSERT INTO vendor_links (code, vendor, vendor_id, state)
      VALUES ('g3', 'bitly', 'sho.rt/g3', 'synced'), ('g4', 'inhouse', 'g4', 'synced'), ('g5', 'bitly', NULL, 'pending')`;
    await source.sql`INSERT INTO reports (code, reporter_hash, reason) VALUES ('g6', 'r1', 'spam')`;
  });

  test('hostile rows are skipped and counted; the rest is restored with safety unknown', async (t) => {
    const dir = join(work, 'export-hostile');
    await exportEscrow({ sql: source.sql }, { outDir: dir });
    const template = JSON.parse(readFileSync(join(dir, 'links.jsonl'), 'utf8').split('\n')[0]!);
    const written = writtenRows();
    const generated = generatedRows(
      new Set([...written.map((w) => w.row.code), ...Array.from({ length: GOOD }, (_, i) => `g${i + 1}`)]),
    );
    const hostile = [...written, ...generated];
    const hostileVendors = [
      { code: 'g7', vendor: 'bitly', vendor_id: '../../x', keep: false },
      { code: 'g8', vendor: 'bitly', vendor_id: 'sho.rt/a\nb', keep: false },
      { code: 'g9', vendor: 'inhouse', vendor_id: 'another-code', keep: false },
      { code: 'g10', vendor: 'bitly', vendor_id: 'https://sho.rt/g10', keep: false },
      { code: 'g11', vendor: 'bitly', vendor_id: 'sho.rt/g11', keep: true },
    ];
    rewriteExport(dir, (table, lines) => {
      if (table === 'links') {
        return [
          ...lines,
          ...hostile.map(({ row }) =>
            JSON.stringify({
              ...template,
              code: row.code,
              target_url: row.target,
              expired_url: row.expiredUrl,
              status: row.status,
              safety: row.safety,
            }),
          ),
        ];
      }
      if (table === 'vendor_links') {
        const base = JSON.parse(lines[0]!);
        return [
          ...lines,
          ...hostileVendors.map((v) =>
            JSON.stringify({ ...base, code: v.code, vendor: v.vendor, vendor_id: v.vendor_id }),
          ),
          // A mapping and a report of a link the restore refuses go with it.
          JSON.stringify({ ...base, code: 'a\nb', vendor: 'bitly', vendor_id: 'sho.rt/x' }),
        ];
      }
      if (table === 'reports') {
        const base = JSON.parse(lines[0]!);
        return [...lines, JSON.stringify({ ...base, code: '../../../../x', reporter_hash: 'r2' })];
      }
      return lines;
    });

    const target = await database();
    const { logger, lines } = capturingLogger();
    const summary = await restoreEscrow({ sql: target.sql, logger, targetPolicy: policy }, { dir });
    const keptHostile = hostile.filter((w) => w.keep);
    const links = await target.sql<
      { code: string; target_url: string; expired_url: string | null; safety: string; checked: boolean }[]
    >`
      SELECT code, target_url, expired_url, safety, safety_checked_at IS NOT NULL AS checked FROM links ORDER BY code`;
    assert.equal(links.length, GOOD + keptHostile.length);
    for (const link of links) {
      assert.ok(isPossibleLinkKey(link.code), JSON.stringify(link.code));
      assert.equal(targetRuleProblem(link.target_url, policy), null, link.code);
      if (link.expired_url !== null) assert.equal(targetRuleProblem(link.expired_url, policy), null);
    }
    // No row vouches for itself: clean becomes unknown, a warning or a block stays, and every one is due a scan.
    const safety = Object.fromEntries(
      links.filter((l) => /^g\d+$/.test(l.code)).map((l) => [l.code, l.safety]),
    );
    assert.equal(safety.g1, 'blocked');
    assert.equal(safety.g2, 'warn');
    assert.equal(safety.g3, 'unknown');
    assert.ok(
      links.every((l) => !l.checked),
      'every restored link is due a re-scan',
    );
    assert.ok(
      links.filter((l) => !['warn', 'blocked'].includes(l.safety)).every((l) => l.safety === 'unknown'),
    );
    const vendors = await target.sql<{ code: string; vendor_id: string | null }[]>`
      SELECT code, vendor_id FROM vendor_links ORDER BY code`;
    assert.deepEqual(
      vendors.map((v) => `${v.code}:${v.vendor_id}`),
      ['g11:sho.rt/g11', 'g3:sho.rt/g3', 'g4:g4', 'g5:null'],
    );
    assert.deepEqual(
      (await target.sql`SELECT code FROM reports ORDER BY code`).map((r) => r.code),
      ['g6'],
    );
    const refusedLinks = hostile.length - keptHostile.length;
    assert.equal(summary.refused?.byTable.links, refusedLinks);
    assert.equal(summary.refused?.byTable.vendor_links, 5);
    assert.equal(summary.refused?.byTable.reports, 1);
    assert.equal(summary.refused?.total, refusedLinks + 6);
    // Counted in the audit entry and the log, in printable lines.
    const [audit] = await target.sql<{ after: { refused: { total: number } } }[]>`
      SELECT after FROM audit_log WHERE action = 'escrow.restored'`;
    assert.equal(audit!.after.refused.total, refusedLinks + 6);
    assert.ok(
      lines.some((l) => /rows the restore refused/.test(l)),
      lines.join('\n'),
    );
    for (const line of lines) assert.match(line, PRINTABLE_LINES);
    // A re-scan is queued for the restored links.
    const [queued] = await target.sql`SELECT value FROM settings WHERE key = 'rescan_after_restore'`;
    assert.ok(queued, 'a re-scan is queued');
    t.diagnostic(
      `restore: ${hostile.length} hostile link rows (${written.length} written, ${generated.length} generated), ` +
        `${keptHostile.length} servable restored, ${refusedLinks} refused; 5 hostile vendor ids and 2 rows of ` +
        `refused links refused; ${GOOD} clean rows restored with safety unknown or worse`,
    );
  });

  test('export files are 0600 in a 0700 folder (a new one, or an empty one given)', async () => {
    const fresh = join(work, 'export-modes', 'nested');
    await exportEscrow({ sql: source.sql }, { outDir: fresh });
    const given = join(work, 'export-modes-given');
    mkdirSync(given, { mode: 0o755 });
    await exportEscrow({ sql: source.sql }, { outDir: given });
    for (const dir of [fresh, given]) {
      assert.equal(statSync(dir).mode & 0o777, 0o700, dir);
      for (const name of readdirSync(dir)) {
        assert.equal(statSync(join(dir, name)).mode & 0o777, 0o600, `${dir}/${name}`);
      }
    }
  });

  test('with ESCROW_SIGNING_KEY: a signed manifest restores; a tampered or unsigned one is refused', async () => {
    const dir = join(work, 'export-signed');
    await exportEscrow({ sql: source.sql }, { outDir: dir, signingKey: SIGNING_KEY });
    assert.ok(existsSync(join(dir, 'manifest.json.sig')), 'the manifest is signed');
    await verifyEscrow(dir, { signingKey: SIGNING_KEY });
    await assert.rejects(verifyEscrow(dir, { signingKey: `${SIGNING_KEY}x` }), /signature .* does not match/);

    // An edit that keeps every checksum consistent (what anyone with write access can do) breaks the signature.
    rewriteExport(dir, (table, lines) =>
      table === 'links'
        ? lines.map((l) => l.replace('https://news.example/story/3', 'https://news.example/evil'))
        : lines,
    );
    await assert.rejects(verifyEscrow(dir, { signingKey: SIGNING_KEY }), /signature .* does not match/);
    const target = await database();
    const refused = await cli('restore', [dir], { ...envFor(target), ESCROW_SIGNING_KEY: SIGNING_KEY });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /manifest\.json\.sig does not match .*ESCROW_SIGNING_KEY/);

    rmSync(join(dir, 'manifest.json.sig'));
    const unsigned = await cli('restore', [dir], { ...envFor(target), ESCROW_SIGNING_KEY: SIGNING_KEY });
    assert.equal(unsigned.code, 1);
    assert.match(unsigned.stderr, /is not signed .* --allow-unsigned/);
    assert.equal((await target.sql`SELECT count(*)::int AS n FROM links`)[0]!.n, 0, 'nothing loaded');

    const allowed = await cli('restore', [dir, '--allow-unsigned'], {
      ...envFor(target),
      ESCROW_SIGNING_KEY: SIGNING_KEY,
    });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stderr, /not signed; restoring anyway \(--allow-unsigned\)/);
    assert.match(allowed.stderr, /re-scan/);
    assert.equal((await target.sql`SELECT count(*)::int AS n FROM links`)[0]!.n, GOOD);
  });
});
