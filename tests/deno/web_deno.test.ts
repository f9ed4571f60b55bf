import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';

import type { Hono } from 'hono';
import { startUpstashFake, type UpstashFake } from '../../devkit/fakes/upstash_fake.ts';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { eventually } from '../../devkit/harness/harness.ts';
import { connectTestTemporal, type TestTemporal, uniqueId } from '../../devkit/harness/temporal.ts';
import { signWebhook } from '../../lib/auth/webhook_signature.ts';
import { createConfiguredResolver } from '../../lib/redirect/create_resolver.ts';
import type { LayeredResolver } from '../../lib/redirect/layered_resolver.ts';
import { encodeServingRecord, servingKey } from '../../lib/redirect/serving_store.ts';
import { parseConfig } from '../../lib/shared/config.ts';
import { randomToken } from '../../lib/shared/crypto.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import {
  createLifelineWorker,
  installTemporalRuntime,
  type LifelineWorker,
} from '../../workers/create_worker.ts';
import { createWorkerDeps } from '../../workers/worker_deps.ts';
import { activeRecord } from '../helpers/serving_records.ts';
import { createUiClient } from '../helpers/ui_client.ts';

// The web tier under Deno exactly as `deno task web` runs it — main_deno.ts with only --allow-net --allow-env
// --allow-read (what Deno Deploy grants), the checked-in islands bundle, Upstash as the serving store (the
// fake in front of the real Redis) — two instances on one database: redirects, 404, preview, the warn page and
// the API; a signed WordPress publish through the suite's real Temporal dev server, run by a Node worker; a UI
// page with its island; a record only the serving store holds; an edit on one instance reaching the other's
// cache; then a clean stop on SIGTERM that flushes the clicks it counted.

const ROOT = join(import.meta.dirname, '..', '..');
const DENO = join(ROOT, 'node_modules', 'deno', 'deno');
const START_TIMEOUT_MS = 120_000;
const HUMAN = {
  'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36',
};

let db: TestDatabase;
let upstash: UpstashFake;
let temporal: TestTemporal;
let worker: LifelineWorker | undefined;
let workerRun: Promise<void> | undefined;
let workerResolver: LayeredResolver | undefined;
const apiKey = `ll_test_${randomToken(32)}`;
const webhookSecret = `whsec_test_${randomToken(32)}`;
const keyPrefix = `${uniqueId('deno')}:`;
const taskQueue = uniqueId('deno');

interface DenoWeb {
  process: ChildProcess;
  base: string;
  output(): string;
}
let a: DenoWeb;
let b: DenoWeb;

/** Environment shared by both Deno instances and the Node worker. */
function sharedEnv(): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    UPSTASH_REDIS_REST_URL: upstash.url,
    UPSTASH_REDIS_REST_TOKEN: upstash.token,
    REDIS_KEY_PREFIX: keyPrefix,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    BOOTSTRAP_API_KEY: apiKey,
    ADMIN_EMAIL: 'admin@example.test',
    ADMIN_PASSWORD: 'correct horse battery',
    WORDPRESS_WEBHOOK_SECRET: webhookSecret,
    SHORT_BASE_URL: 'http://sho.rt.test',
    METRICS_TOKEN: 'deno-test-metrics-token',
  };
}

async function startDeno(name: string): Promise<DenoWeb> {
  let output = '';
  const child = spawn(DENO, ['task', 'web'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DENO_NO_UPDATE_CHECK: '1',
      DENO_DIR: process.env.DENO_DIR ?? join(ROOT, '.cache', 'deno'),
      ...sharedEnv(),
      PORT: '0',
      HOST: '127.0.0.1',
      CLICK_FLUSH_INTERVAL_MS: '600000',
      SHUTDOWN_DELAY_MS: '0',
      LOG_LEVEL: 'info',
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`Deno ${name} did not start in ${START_TIMEOUT_MS} ms:\n${output}`)),
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
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Deno ${name} exited (${code}) before listening:\n${output}`));
    });
  });
  return { process: child, base: `http://127.0.0.1:${port}`, output: () => output };
}

function api(web: DenoWeb, path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${apiKey}`);
  if (init.json !== undefined) headers.set('Content-Type', 'application/json');
  return fetch(`${web.base}${path}`, {
    ...init,
    headers,
    body: init.json === undefined ? init.body : JSON.stringify(init.json),
  });
}

before(async () => {
  assert.ok(existsSync(DENO), `the Deno binary is missing at ${DENO} (npm install)`);
  db = await createTestDatabase();
  await db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    VALUES ('denoOk1', 'https://example.com/d%C3%A9j%C3%A0/vu?x=1', 'active', 'clean', 'api', 'test'),
           ('denoWarn', 'https://example.com/odd', 'active', 'warn', 'api', 'test')`;
  upstash = await startUpstashFake({
    redisUrl: process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    token: `upstash-${randomToken(12)}`,
  });
  // The Runtime (our logger, no signal handlers) before the first native connection of this process.
  installTemporalRuntime(createLogger({ level: 'silent' }));
  temporal = await connectTestTemporal();
  // Both instances at once: each compiles on its own, and two cores are enough for that.
  [a, b] = await Promise.all([startDeno('A'), startDeno('B')]);
});

after(async () => {
  for (const web of [a, b]) {
    if (web && web.process.exitCode === null && web.process.signalCode === null) web.process.kill('SIGKILL');
  }
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await workerRun?.catch(() => {});
  await workerResolver?.close();
  await temporal?.close();
  await upstash?.stop();
  const redis = createClient({ url: process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' });
  await redis.connect();
  for await (const keys of redis.scanIterator({ MATCH: `${keyPrefix}*` }))
    if (keys.length) await redis.del(keys);
  await redis.close();
  await db?.drop();
});

describe('the web tier under Deno', () => {
  test('runs with only --allow-net --allow-env --allow-read', () => {
    const task = (JSON.parse(readFileSync(join(ROOT, 'deno.json'), 'utf8')) as { tasks: { web: string } })
      .tasks.web;
    const flags = task.match(/--allow-[a-z-]+(=\S+)?/g) ?? [];
    assert.deepEqual(flags.sort(), ['--allow-env', '--allow-net', '--allow-read']);
    assert.match(task, /main_deno\.ts$/);
  });

  test('redirects, 404s, previews and serves the API', async () => {
    const redirect = await fetch(`${a.base}/denoOk1`, { redirect: 'manual', headers: HUMAN });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), 'https://example.com/d%C3%A9j%C3%A0/vu?x=1');
    assert.equal(redirect.headers.get('x-robots-tag'), 'noindex');
    assert.equal(redirect.headers.get('cache-control'), 'private, max-age=90');

    const head = await fetch(`${a.base}/denoOk1`, { method: 'HEAD', redirect: 'manual', headers: HUMAN });
    assert.equal(head.status, 301);

    const missing = await fetch(`${a.base}/NoSuchCode`, { redirect: 'manual' });
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /Link not found/);

    const impossible = await fetch(`${a.base}/%2F%2Fevil.example`, { redirect: 'manual' });
    assert.equal(impossible.status, 404);
    assert.equal(impossible.headers.get('location'), null);

    const preview = await fetch(`${a.base}/denoOk1+`, { redirect: 'manual' });
    assert.equal(preview.status, 200);
    assert.match(await preview.text(), /https:\/\/example.com\/d%C3%A9j%C3%A0\/vu\?x=1/);

    const warn = await fetch(`${a.base}/denoWarn`, { redirect: 'manual', headers: HUMAN });
    assert.equal(warn.status, 200);
    assert.match(await warn.text(), /Check before you continue/);

    const unauthorized = await fetch(`${a.base}/api/v1/links/denoOk1`);
    assert.equal(unauthorized.status, 401);
    const read = await api(a, '/api/v1/links/denoOk1');
    assert.equal(read.status, 200, await read.clone().text());
    const link = (await read.json()) as { code: string; url: string; status: string };
    assert.deepEqual(
      [link.code, link.url, link.status],
      ['denoOk1', 'https://example.com/d%C3%A9j%C3%A0/vu?x=1', 'active'],
    );

    assert.equal((await fetch(`${a.base}/healthz`)).status, 200);
    assert.equal((await fetch(`${a.base}/livez`)).status, 200);
    const ready = await fetch(`${a.base}/readyz`);
    assert.deepEqual(
      [ready.status, await ready.json()],
      [200, { status: 'ready', checks: { postgres: 'ok', servingStore: 'ok', cache: 'warm' } }],
    );
    // Default metrics and the redirect histogram under Deno too.
    const metrics = await (
      await fetch(`${a.base}/metrics`, { headers: { Authorization: 'Bearer deno-test-metrics-token' } })
    ).text();
    assert.match(metrics, /^lifeline_redirect_duration_seconds_count [1-9]/m);
    assert.match(metrics, /^process_cpu_seconds_total /m);
  });

  test('a record only the serving store (Upstash) holds is answered from it', async () => {
    const key = servingKey(keyPrefix, 'denoStore1');
    const redis = createClient({ url: process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' });
    await redis.connect();
    await redis.set(
      key,
      encodeServingRecord(activeRecord('denoStore1', 'https://example.com/from-the-store')),
    );
    await redis.close();
    const answer = await fetch(`${b.base}/denoStore1`, { redirect: 'manual', headers: HUMAN });
    assert.equal(answer.status, 301);
    assert.equal(answer.headers.get('location'), 'https://example.com/from-the-store');
    // It went through the Upstash REST protocol (the fake logs every command it was sent).
    assert.ok(upstash.commands.some((c) => c[0]?.toUpperCase() === 'GET' && c[1] === key));
  });

  test('a signed WordPress publish goes through Temporal to a worker; the other instance serves its link', async () => {
    const config = parseConfig({ ...sharedEnv(), LOG_LEVEL: 'silent' });
    const logger = createLogger({ level: 'silent' });
    workerResolver = createConfiguredResolver(config, { sql: db.sql, logger, role: 'worker' });
    worker = await createLifelineWorker({
      connection: temporal.nativeConnection,
      namespace: config.temporal.namespace,
      taskQueue,
      ...(temporal.workflowBundle ? { workflowBundle: temporal.workflowBundle } : {}),
      deps: createWorkerDeps(config, {
        sql: db.sql,
        logger,
        resolver: workerResolver,
        servingStore: workerResolver.store,
      }),
    });
    workerRun = worker.run();

    const body = JSON.stringify({
      id: uniqueId('delivery'),
      event: 'post.published',
      site: 'deno',
      postId: 77,
      permalink: 'https://news.example/deno/77/',
      title: 'Published under Deno',
      occurredAt: new Date().toISOString(),
    });
    const accepted = await fetch(`${a.base}/api/v1/hooks/wordpress`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Lifeline-Signature': await signWebhook(webhookSecret, body, Date.now() / 1000),
      },
      body,
    });
    assert.equal(accepted.status, 202, await accepted.clone().text());
    assert.equal(((await accepted.json()) as { workflowId: string }).workflowId, 'publish:deno:77');
    const link = await eventually(
      async () => {
        const response = await api(b, '/api/v1/links/by-post/deno/77');
        const found =
          response.status === 200 ? ((await response.json()) as { code: string; status: string }) : null;
        return found?.status === 'active' ? found : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the post link, active' },
    );
    const history = await temporal.client.workflow.getHandle('publish:deno:77').fetchHistory();
    assert.ok((history.events ?? []).length > 0, 'the workflow ran on the dev server');
    const redirect = await fetch(`${b.base}/${link.code}`, { redirect: 'manual', headers: HUMAN });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), 'https://news.example/deno/77/');
  });

  test('a UI page with its island, and the checked-in island bundle it loads', async () => {
    const fetchApp = {
      request: (path: string, init: RequestInit) =>
        fetch(`${a.base}${path}`, { ...init, redirect: 'manual' }),
    } as unknown as Hono<never>;
    const ui = createUiClient(fetchApp);
    const login = await ui.login('admin@example.test', 'correct horse battery');
    assert.equal(login.status, 303, await login.clone().text());
    const page = await ui.get('/ui/links/new');
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /data-island="LiveField"/);
    assert.match(html, /<script type="module" src="\/static\/islands\.js"><\/script>/);
    const bundle = await fetch(`${a.base}/static/islands.js`);
    assert.equal(bundle.status, 200);
    assert.match(bundle.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.deepEqual(
      Buffer.from(await bundle.arrayBuffer()),
      readFileSync(join(ROOT, 'static', 'islands.js')),
      'Deno serves the checked-in bundle (it runs no esbuild)',
    );
  });

  test('an edit on one instance reaches the other instance’s cache', async (t) => {
    const created = await api(a, '/api/v1/links', {
      method: 'POST',
      json: { url: 'https://example.com/before' },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { code } = (await created.json()) as { code: string };
    // Both instances now hold the link in their LRU.
    for (const web of [a, b]) {
      const first = await fetch(`${web.base}/${code}`, { redirect: 'manual', headers: HUMAN });
      assert.equal(first.headers.get('location'), 'https://example.com/before');
    }
    const edited = await api(a, `/api/v1/links/${code}`, {
      method: 'PATCH',
      json: { url: 'https://example.com/after' },
    });
    assert.equal(edited.status, 200, await edited.clone().text());
    const editedAt = Date.now();
    const seenAfterMs = await eventually(
      async () => {
        const answer = await fetch(`${b.base}/${code}`, { redirect: 'manual', headers: HUMAN });
        return answer.headers.get('location') === 'https://example.com/after'
          ? Date.now() - editedAt
          : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 25, what: 'instance B to drop its copy (Postgres NOTIFY)' },
    );
    // Far inside the LRU's 60 s TTL: the invalidation message, not expiry, made B re-read.
    assert.ok(seenAfterMs < 5_000, `B saw the edit after ${seenAfterMs} ms`);
    t.diagnostic(`instance B answered the new target ${seenAfterMs} ms after A's PATCH returned`);
  });

  test('stops cleanly on SIGTERM, flushing the clicks it buffered', async () => {
    const stopped = [a, b].map(
      (web) => new Promise<number | null>((resolve) => web.process.once('exit', (code) => resolve(code))),
    );
    a.process.kill('SIGTERM');
    b.process.kill('SIGTERM');
    const codes = await Promise.race([
      Promise.all(stopped),
      new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 20_000)),
    ]);
    assert.deepEqual(
      codes,
      [0, 0],
      `Deno exit ${codes}:\n${a.output().slice(-2000)}\n${b.output().slice(-2000)}`,
    );
    assert.match(a.output(), /"msg":"stopped"/);
    // Flushed only at shutdown (the interval is 10 minutes): A's redirect, HEAD and warn page.
    const rows = await db.sql<{ code: string; kind: string; clicks: number }[]>`
      SELECT code, kind, SUM(clicks)::int AS clicks FROM click_counts
      WHERE code IN ('denoOk1', 'denoWarn') GROUP BY code, kind ORDER BY code, kind`;
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
