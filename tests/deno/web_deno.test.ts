import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { randomToken } from '../../lib/shared/crypto.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

// The same web tier under Deno (`deno task web`: main_deno.ts on Deno.serve) against this file's own clone
// of the test Postgres: a redirect, a 404, the preview page and an API read, then a clean stop on SIGTERM
// that flushes the clicks it counted.

const ROOT = join(import.meta.dirname, '..', '..');
const DENO = join(ROOT, 'node_modules', 'deno', 'deno');
const START_TIMEOUT_MS = 90_000;

let db: TestDatabase;
let deno: ChildProcess | undefined;
let base = '';
let output = '';
const apiKey = `ll_test_${randomToken(32)}`;

before(async () => {
  assert.ok(existsSync(DENO), `the Deno binary is missing at ${DENO} (npm install)`);
  db = await createTestDatabase();
  await db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    VALUES ('denoOk1', 'https://example.com/d%C3%A9j%C3%A0/vu?x=1', 'active', 'clean', 'api', 'test'),
           ('denoWarn', 'https://example.com/odd', 'active', 'warn', 'api', 'test')`;
  deno = spawn(DENO, ['task', 'web'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DENO_NO_UPDATE_CHECK: '1',
      DENO_DIR: process.env.DENO_DIR ?? join(ROOT, '.cache', 'deno'),
      DATABASE_URL: db.url,
      BOOTSTRAP_API_KEY: apiKey,
      ADMIN_EMAIL: 'admin@example.test',
      ADMIN_PASSWORD: 'correct horse battery',
      WORDPRESS_WEBHOOK_SECRET: `whsec_test_${randomToken(32)}`,
      PORT: '0',
      HOST: '127.0.0.1',
      TEMPORAL_ADDRESS: process.env.LIFELINE_TEST_TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
      TEMPORAL_TASK_QUEUE: `deno-${randomToken(8)}`,
      CLICK_FLUSH_INTERVAL_MS: '600000',
      LOG_LEVEL: 'info',
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Deno did not start in ${START_TIMEOUT_MS} ms:\n${output}`)),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /"port":(\d+),"runtime":"deno","msg":"web listening"/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    deno!.stdout!.on('data', onData);
    deno!.stderr!.on('data', onData);
    deno!.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Deno exited (${code}) before listening:\n${output}`));
    });
  });
  base = `http://127.0.0.1:${port}`;
});

after(async () => {
  if (deno && deno.exitCode === null && deno.signalCode === null) deno.kill('SIGKILL');
  await db?.drop();
});

describe('the web tier under Deno', () => {
  test('redirects, 404s, previews and serves the API', async () => {
    const human = {
      'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36',
    };
    const redirect = await fetch(`${base}/denoOk1`, { redirect: 'manual', headers: human });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), 'https://example.com/d%C3%A9j%C3%A0/vu?x=1');
    assert.equal(redirect.headers.get('x-robots-tag'), 'noindex');
    assert.equal(redirect.headers.get('cache-control'), 'private, max-age=90');

    const head = await fetch(`${base}/denoOk1`, { method: 'HEAD', redirect: 'manual', headers: human });
    assert.equal(head.status, 301);

    const missing = await fetch(`${base}/NoSuchCode`, { redirect: 'manual' });
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /Link not found/);

    const impossible = await fetch(`${base}/%2F%2Fevil.example`, { redirect: 'manual' });
    assert.equal(impossible.status, 404);
    assert.equal(impossible.headers.get('location'), null);

    const preview = await fetch(`${base}/denoOk1+`, { redirect: 'manual' });
    assert.equal(preview.status, 200);
    assert.match(await preview.text(), /https:\/\/example.com\/d%C3%A9j%C3%A0\/vu\?x=1/);

    const warn = await fetch(`${base}/denoWarn`, { redirect: 'manual', headers: human });
    assert.equal(warn.status, 200);
    assert.match(await warn.text(), /Check before you continue/);

    const unauthorized = await fetch(`${base}/api/v1/links/denoOk1`);
    assert.equal(unauthorized.status, 401);
    const read = await fetch(`${base}/api/v1/links/denoOk1`, {
      headers: { Authorization: `Bearer ${apiKey}` },
    });
    assert.equal(read.status, 200, await read.clone().text());
    const link = (await read.json()) as { code: string; url: string; status: string };
    assert.deepEqual(
      [link.code, link.url, link.status],
      ['denoOk1', 'https://example.com/d%C3%A9j%C3%A0/vu?x=1', 'active'],
    );

    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 200);
  });

  test('stops cleanly on SIGTERM, flushing the clicks it buffered', async () => {
    const exited = new Promise<number | null>((resolve) => deno!.once('exit', (code) => resolve(code)));
    deno!.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 20_000)),
    ]);
    assert.equal(code, 0, `Deno exit ${code}:\n${output.slice(-2000)}`);
    assert.match(output, /"msg":"stopped"/);
    // Flushed only at shutdown (the interval is 10 minutes): a redirect, a HEAD and the warn page.
    const rows = await db.sql<{ code: string; kind: string; clicks: number }[]>`
      SELECT code, kind, clicks FROM click_counts ORDER BY code, kind`;
    assert.deepEqual(
      rows.map((r) => [r.code, r.kind, r.clicks]),
      [
        ['denoOk1', 'head', 1],
        ['denoOk1', 'human', 1],
        ['denoWarn', 'human', 1],
      ],
    );
  });
});
