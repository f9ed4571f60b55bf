import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { createStandaloneAnswerer, seedLinkStates } from '../../../devkit/harness/link_states.ts';
import { forEachConcurrently } from '../../../lib/shared/concurrency.ts';
import { type Config, parseConfig } from '../../../lib/shared/config.ts';
import { KV_META_KEY } from '../../../lib/snapshot/kv_snapshot.ts';
import { toNginxString } from '../../../lib/snapshot/nginx_snapshot.ts';
import { writeSnapshotFiles } from '../../../lib/snapshot/write_snapshot.ts';
import { createCanonicalTargetPolicy } from '../../../lib/targets/target_rule.ts';
import { getFreePort } from '../../../scripts/dev_server.ts';
import { ROOT } from '../../../scripts/temporal_cli.ts';
import { startNginx } from '../../helpers/nginx.ts';

// The static last-resort resolver, served by Debian's nginx, against Lifeline's own answers for every code of a
// 100,000-link database in every state (DESIGN.md: "servable by a plain web server without our code").
const LINKS = 100_000;
let db: TestDatabase;
let config: Config;
let work: string;

before(async () => {
  db = await createTestDatabase();
  config = parseConfig({
    DATABASE_URL: db.url,
    SHORT_BASE_URL: 'https://sho.rt.test',
    UTM_PARAMS: 'utm_source=short&utm_medium=social',
    REDIRECT_CACHE_CONTROL: 'public, max-age=90, s-maxage=600',
  });
  await seedLinkStates(db.sql, { count: LINKS, prefix: 'n' });
  // Codes are case-sensitive; nginx's map keys are not: three codes that differ only in case.
  await db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner) VALUES
      ('AbCdE1', 'https://news.example/mixed', 'active', 'clean', 'api', 't'),
      ('abcde1', 'https://news.example/lower', 'active', 'clean', 'api', 't'),
      ('ABCDE1', 'https://news.example/upper', 'gone', 'clean', 'api', 't')`;
  work = mkdtempSync(join(tmpdir(), 'lifeline-snapshot-'));
  // nginx started by root serves files as `nobody`: the snapshot must be readable by others.
  chmodSync(work, 0o755);
});
after(async () => {
  await db.drop();
  rmSync(work, { recursive: true, force: true });
});

/** `status Location Cache-Control` for one answer, the shape both sides are compared in. */
function line(status: number, location: string | undefined, cacheControl: string | undefined): string {
  return `${status} ${location ?? '-'} ${cacheControl ?? '-'}`;
}

async function lifelineAnswers(codes: string[]): Promise<Map<string, string>> {
  const answerer = createStandaloneAnswerer(config, db.sql);
  const out = new Map<string, string>();
  await forEachConcurrently(codes, 16, async (code) => {
    const a = await answerer.answer({ method: 'GET', code, query: '', header: () => undefined });
    out.set(code, line(a.status, a.headers.Location, a.headers['Cache-Control']));
  });
  return out;
}

describe('static snapshot', () => {
  test('nginx serves every code of a 100,000-link database exactly as Lifeline answers it', async () => {
    const port = await getFreePort();
    const started = Date.now();
    const summary = await writeSnapshotFiles(
      { sql: db.sql },
      {
        outDir: join(work, 'snap'),
        formats: ['nginx'],
        shortBaseUrl: config.shortBaseUrl,
        redirect: config.redirect,
        targetPolicy: createCanonicalTargetPolicy(config),
        listen: `127.0.0.1:${port}`,
      },
    );
    const generatedMs = Date.now() - started;
    assert.deepEqual(summary.skipped, {});
    // Pending links answer 404 like unknown codes: every other code is in the map.
    assert.equal(summary.answers, LINKS - Math.floor((LINKS + 5) / 24) + 3);
    const nginx = await startNginx({
      prefix: join(work, 'nginx-prefix'),
      configPath: join(work, 'snap', 'nginx', 'nginx.conf'),
      port,
    });
    const nginxStartMs = Date.now() - started - generatedMs;
    try {
      const codes = Array.from({ length: LINKS }, (_, i) => `n${i + 1}`);
      // Unknown and impossible codes, reserved words, the root of a prefix.
      codes.push('zzzzzzz', 'n0', 'n', 'api', 'healthy', 'N1', 'n1-', '_lifeline');
      codes.push('AbCdE1', 'abcde1', 'ABCDE1', 'aBcDe1', 'abcdE1');
      const expected = await lifelineAnswers(codes);
      const agent = new Agent({ keepAlive: true, maxSockets: 16 });
      const actual = new Map<string, string>();
      const robots = new Set<string>();
      await forEachConcurrently(
        codes,
        16,
        (code) =>
          new Promise<void>((resolve, reject) => {
            const req = request({ host: '127.0.0.1', port, path: `/${code}`, agent }, (res) => {
              res.resume();
              res.on('end', () => {
                actual.set(
                  code,
                  line(res.statusCode!, res.headers.location, res.headers['cache-control'] as string),
                );
                robots.add(String(res.headers['x-robots-tag']));
                resolve();
              });
            });
            req.on('error', reject);
            req.end();
          }),
      );
      agent.destroy();
      const mismatches = codes.filter((c) => actual.get(c) !== expected.get(c));
      assert.deepEqual(
        mismatches.slice(0, 10).map((c) => ({ code: c, lifeline: expected.get(c), nginx: actual.get(c) })),
        [],
        `${mismatches.length} of ${codes.length} codes differ`,
      );
      assert.deepEqual([...robots], ['noindex']);
      const statuses = new Map<string, number>();
      for (const value of expected.values()) {
        const status = value.split(' ')[0]!;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      for (const status of ['200', '301', '302', '307', '308', '404', '410', '451'])
        assert.ok(statuses.get(status), `some code answers ${status}`);
      // Byte-exact Locations with characters nginx's configuration would otherwise eat, and UTM parameters.
      assert.equal(
        expected.get('n7')?.split(' ')[1],
        "https://news.example/q;x='$1'?a=$1&d={z};e=%27f%27&utm_source=short&utm_medium=social#frag;'$-7",
      );
      assert.equal(actual.get('n7'), expected.get('n7'));
      // The warn interstitial: 200 with the destination and a way on.
      const warn = await fetch(`http://127.0.0.1:${port}/n18`);
      const html = await warn.text();
      assert.equal(warn.status, 200);
      assert.match(html, /Check before you continue/);
      assert.match(
        html,
        /href="https:\/\/news\.example\/story\/18\?ref=home&amp;utm_source=short&amp;utm_medium=social"/,
      );
      // Gone and expired pages, a blocked page, and the not-found page say so.
      assert.match(await (await fetch(`http://127.0.0.1:${port}/n14`)).text(), /Link removed/);
      assert.match(await (await fetch(`http://127.0.0.1:${port}/n10`)).text(), /Link expired/);
      assert.match(await (await fetch(`http://127.0.0.1:${port}/n16`)).text(), /Link blocked/);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.equal(((await health.json()) as { status: string }).status, 'static-snapshot');
      // Internal pages are not reachable from outside.
      assert.equal((await fetch(`http://127.0.0.1:${port}/_lifeline/gone.html`)).status, 404);
      console.log(
        `nginx snapshot of ${LINKS} links: generated in ${generatedMs} ms, nginx ready in ${nginxStartMs} ms; ` +
          `${codes.length} codes compared, 0 differ (${[...statuses].map(([s, n]) => `${n}×${s}`).join(', ')})`,
      );
    } finally {
      await nginx.stop();
    }
  });

  test('the _redirects file and the key-value JSON hold the same answers', async () => {
    const out = join(work, 'static');
    const summary = await writeSnapshotFiles(
      { sql: db.sql },
      {
        outDir: out,
        formats: ['redirects', 'json'],
        shortBaseUrl: config.shortBaseUrl,
        redirect: config.redirect,
        targetPolicy: createCanonicalTargetPolicy(config),
      },
    );
    const codes = Array.from({ length: 2_400 }, (_, i) => `n${i + 1}`);
    const expected = await lifelineAnswers(codes);
    const rules = new Map<string, { to: string; status: number }>();
    for (const text of readFileSync(join(out, 'redirects', '_redirects'), 'utf8').split('\n')) {
      if (text === '' || text.startsWith('#')) continue;
      const [from, to, status] = text.split(/\s+/);
      rules.set(from!.slice(1), { to: to!, status: Number(status) });
    }
    const kv = new Map<string, { status: number; location?: string; cacheControl: string; page?: string }>();
    const kvFiles = readdirSync(join(out, 'json')).sort();
    assert.deepEqual(
      kvFiles,
      summary.files.filter((f) => f.startsWith('json/')).map((f) => f.slice(5)),
    );
    for (const file of kvFiles) {
      const pairs = JSON.parse(readFileSync(join(out, 'json', file), 'utf8')) as {
        key: string;
        value: string;
      }[];
      assert.ok(pairs.length <= 10_000);
      for (const pair of pairs) kv.set(pair.key, JSON.parse(pair.value));
    }
    assert.ok(kv.has(KV_META_KEY));
    for (const code of codes) {
      const [status, location, ...cc] = expected.get(code)!.split(' ');
      const rule = rules.get(code);
      const pair = kv.get(code);
      if (status === '404') {
        assert.equal(rule, undefined, code);
        assert.equal(pair, undefined, code);
        continue;
      }
      assert.equal(rule?.status, Number(status), code);
      assert.equal(pair?.status, Number(status), code);
      assert.equal(pair?.cacheControl, cc.join(' '), code);
      if (location !== '-') {
        assert.equal(rule?.to, location, code);
        assert.equal(pair?.location, location, code);
      } else {
        assert.match(rule!.to, /^\/_lifeline\/(gone|expired|blocked|warn\/n\d+)\.html$/, code);
        assert.ok(pair?.page, code);
      }
    }
  });

  test('the CLI: formats, a clear refusal for a bad format or a used directory', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number; stderr: string; stdout: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          ['--import', 'tsx', join(ROOT, 'scripts', 'snapshot.ts'), ...args],
          {
            cwd: ROOT,
            env: {
              PATH: process.env.PATH ?? '',
              DATABASE_URL: db.url,
              SHORT_BASE_URL: 'https://sho.rt.test',
            },
          },
        );
        let stderr = '';
        let stdout = '';
        child.stderr.on('data', (d) => {
          stderr += d;
        });
        child.stdout.on('data', (d) => {
          stdout += d;
        });
        child.on('exit', (code) => resolve({ code: code ?? 1, stderr, stdout }));
      });
    const bad = await run(['--format', 'apache', '--out', join(work, 'cli-bad')]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown --format apache[\s\S]*usage: npm run snapshot/);
    assert.equal((await run(['--format', 'nginx'])).code, 2, '--out is required');
    const out = join(work, 'cli');
    const made = await run(['--format', 'nginx,json', '--out', out, '--listen', '127.0.0.1:8099']);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stderr, /snapshot of \d+ codes as of .* \(.*× 301.*; unknown codes 404\)/);
    assert.match(readFileSync(join(out, 'nginx', 'nginx.conf'), 'utf8'), /listen 127\.0\.0\.1:8099;/);
    assert.deepEqual(readdirSync(out).sort(), ['json', 'nginx', 'snapshot.json']);
    const again = await run(['--format', 'nginx', '--out', out]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is not empty .* a snapshot goes into a new or empty directory/);
  });

  test('nginx strings keep every byte: backslashes, quotes and dollar signs', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${variable} syntax, written literally
    assert.equal(toNginxString('a\\b"c$d'), '"a\\\\b\\"c${lifeline_dollar}d"');
  });
});
