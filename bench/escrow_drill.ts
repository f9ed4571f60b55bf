// The escrow drill: seed N links in every state into a scratch database, record what
// Lifeline's own answerer gives for every code, `npm run export`, DROP the database, create it empty,
// `npm run restore`, and compare every code's answer again (status, Location byte for byte, the warn page).
// Reports export time and peak RSS (the export CLI's own), restore time, and every mismatch.
//
//   npx tsx bench/escrow_drill.ts                          # 1,000,000 links (a quiet machine: several minutes)
//   BENCH_LINKS=20000 npx tsx bench/escrow_drill.ts        # a quick proof
//   BENCH_LINKS_ONLY=1 …                                   # export without the audit log and clicks
//
// Uses the local Postgres (LIFELINE_TEST_POSTGRES_ADMIN_URL, default postgres://<user>@127.0.0.1:5432/postgres);
// the scratch database `lifeline_escrow_drill_<time>` is dropped at the end (BENCH_KEEP=1 keeps it and the export).
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import postgres from 'postgres';
import { createStandaloneAnswerer, describeAnswers, seedLinkStates } from '../devkit/harness/link_states.ts';
import { parseConfig } from '../lib/shared/config.ts';
import { buildIndex, dropIndexes, listPlainIndexes } from '../lib/stores/escrow_store.ts';
import { migrateDatabase } from '../lib/stores/migrate.ts';
import { createSql, type Sql } from '../lib/stores/sql.ts';
import { ROOT } from '../scripts/temporal_cli.ts';

const LINKS = Number(process.env.BENCH_LINKS ?? 1_000_000);
const LINKS_ONLY = process.env.BENCH_LINKS_ONLY === '1';
const KEEP = process.env.BENCH_KEEP === '1';
const UNKNOWN_PROBES = 1_000;
const CHUNK = 10_000;
const LIMITS = { exportMs: 60_000, exportRssMiB: 200, restoreMs: 180_000 };

const adminUrl =
  process.env.LIFELINE_TEST_POSTGRES_ADMIN_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/postgres`;
const name = `lifeline_escrow_drill_${Date.now().toString(36)}`;
const url = new URL(adminUrl);
url.pathname = `/${name}`;
const databaseUrl = url.toString();
const work = mkdtempSync(join(tmpdir(), 'lifeline-escrow-drill-'));
const exportDir = join(work, 'export');
const say = (msg: string) => process.stderr.write(`[drill] ${msg}\n`);
const config = parseConfig({
  DATABASE_URL: databaseUrl,
  SHORT_BASE_URL: 'https://sho.rt',
  UTM_PARAMS: 'utm_source=short&utm_medium=social',
});
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });

async function createDatabase(): Promise<void> {
  await admin.unsafe(`CREATE DATABASE "${name}"`);
}

async function dropDatabase(): Promise<void> {
  await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

/** Every code's answer, in code order, into `file` (streamed: memory stays flat at a million codes). */
async function recordAnswers(sql: Sql, file: string): Promise<{ ms: number; lines: number }> {
  const started = Date.now();
  const answerer = createStandaloneAnswerer(config, sql);
  const out = createWriteStream(file);
  let lines = 0;
  const write = (text: string) =>
    new Promise<void>((resolve) => (out.write(text) ? resolve() : out.once('drain', () => resolve())));
  for (let from = 1; from <= LINKS; from += CHUNK) {
    const codes = Array.from({ length: Math.min(CHUNK, LINKS - from + 1) }, (_, i) => `x${from + i}`);
    const answers = await describeAnswers(answerer, codes, 16);
    await write(`${answers.join('\n')}\n`);
    lines += answers.length;
  }
  const probes = Array.from({ length: UNKNOWN_PROBES }, (_, i) => `x${LINKS + 1 + i}`);
  probes.push('X1', 'x0', 'api', 'healthz');
  const answers = await describeAnswers(answerer, probes, 16);
  await write(`${answers.join('\n')}\n`);
  lines += answers.length;
  await new Promise<void>((resolve) => out.end(resolve));
  return { ms: Date.now() - started, lines };
}

/** The Node flags package.json's npm script gives `script` (the export's memory settings are part of what is measured). */
function npmScriptFlags(script: string): string[] {
  const scripts = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts;
  const command = Object.values(scripts).find((c) => c.includes(`scripts/${script}`)) ?? '';
  return command.split(/\s+/).filter((token) => token.startsWith('--'));
}

function run(script: string, args: string[]): Promise<{ ms: number; stdout: string; stderr: string }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', ...npmScriptFlags(script), join(ROOT, 'scripts', script), ...args],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (code) => {
      if (code === 0) resolve({ ms: Date.now() - started, stdout, stderr });
      else reject(new Error(`${script} exited ${code}: ${stderr}`));
    });
  });
}

async function compare(before: string, after: string): Promise<{ compared: number; mismatches: string[] }> {
  const a = createInterface({ input: (await import('node:fs')).createReadStream(before) })[
    Symbol.asyncIterator
  ]();
  const b = createInterface({ input: (await import('node:fs')).createReadStream(after) })[
    Symbol.asyncIterator
  ]();
  let compared = 0;
  const mismatches: string[] = [];
  for (;;) {
    const [x, y] = await Promise.all([a.next(), b.next()]);
    if (x.done && y.done) break;
    compared++;
    if (x.value !== y.value) {
      if (mismatches.length < 10)
        mismatches.push(`before: ${x.value ?? '(none)'} | after: ${y.value ?? '(none)'}`);
      else mismatches.push('');
    }
  }
  return { compared, mismatches };
}

try {
  const load = loadavg().map((n) => Number(n.toFixed(2)));
  say(`load average ${load.join(', ')}; seeding ${LINKS} links into ${name}...`);
  await createDatabase();
  await migrateDatabase(databaseUrl);
  let sql = createSql({ url: databaseUrl, max: 20, applicationName: 'escrow-drill' });
  let started = Date.now();
  // Seeding a million rows is much faster with the secondary indexes built afterwards (as a restore does).
  const tables = ['links', 'vendor_links', 'reports', 'audit_log', 'click_counts'];
  const indexes = await sql.begin((tx) => listPlainIndexes(tx, tables));
  await sql.begin((tx) =>
    dropIndexes(
      tx,
      indexes.map((i) => i.name),
    ),
  );
  await seedLinkStates(sql, { count: LINKS, prefix: 'x', extras: !LINKS_ONLY });
  for (const index of indexes) await buildIndex(sql, index.definition);
  await sql`VACUUM ANALYZE`;
  say(`seeded in ${((Date.now() - started) / 1000).toFixed(1)} s; recording every answer...`);
  const before = await recordAnswers(sql, join(work, 'before.txt'));
  say(`${before.lines} answers recorded in ${(before.ms / 1000).toFixed(1)} s; exporting...`);
  await sql.end();

  const exported = await run('export.ts', ['--out', exportDir, ...(LINKS_ONLY ? ['--links-only'] : [])]);
  const exportReport = JSON.parse(exported.stdout.trim().split('\n').at(-1)!) as {
    durationMs: number;
    peakRssMiB: number;
  };
  const manifest = JSON.parse(readFileSync(join(exportDir, 'manifest.json'), 'utf8')) as {
    files: { name: string; rows: number; bytes: number }[];
  };
  say(
    `exported in ${(exported.ms / 1000).toFixed(1)} s (CLI), peak RSS ${exportReport.peakRssMiB} MiB; dropping the database...`,
  );

  await dropDatabase();
  await createDatabase();
  const restored = await run('restore.ts', [exportDir]);
  const restoreReport = JSON.parse(restored.stdout.trim().split('\n').at(-1)!) as {
    durationMs: number;
    links: number;
  };
  say(
    `restored in ${(restored.ms / 1000).toFixed(1)} s (CLI, migrations included); recording every answer again...`,
  );

  sql = createSql({ url: databaseUrl, max: 20, applicationName: 'escrow-drill' });
  started = Date.now();
  const after = await recordAnswers(sql, join(work, 'after.txt'));
  await sql.end();
  const { compared, mismatches } = await compare(join(work, 'before.txt'), join(work, 'after.txt'));
  const report = {
    links: LINKS,
    history: !LINKS_ONLY,
    loadAverageAtStart: load,
    loadAverageAtEnd: loadavg().map((n) => Number(n.toFixed(2))),
    export: {
      cliMs: exported.ms,
      snapshotToManifestMs: exportReport.durationMs,
      peakRssMiB: exportReport.peakRssMiB,
      files: manifest.files.map((f) => ({ name: f.name, rows: f.rows, bytes: f.bytes })),
    },
    restore: { cliMs: restored.ms, loadMs: restoreReport.durationMs, links: restoreReport.links },
    answers: {
      compared,
      mismatched: mismatches.length,
      examples: mismatches.filter(Boolean),
      recordMs: [before.ms, after.ms],
    },
    limits: {
      exportUnder60s: exported.ms < LIMITS.exportMs,
      exportUnder200MiB: exportReport.peakRssMiB < LIMITS.exportRssMiB,
      restoreUnder3min: restored.ms < LIMITS.restoreMs,
      everyAnswerEqual: mismatches.length === 0 && compared === LINKS + UNKNOWN_PROBES + 4,
    },
  };
  console.log(JSON.stringify(report, null, 2));
  process.exitCode = Object.values(report.limits).every(Boolean) ? 0 : 1;
} finally {
  if (!KEEP) {
    await dropDatabase().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  } else {
    say(`kept ${name} and ${work}`);
  }
  await admin.end();
}
