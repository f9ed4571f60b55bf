// The product's own entries — `npm run worker` (workers/main.ts) and `npm run web` (main.ts) — reaching Temporal
// only through a TLS-terminating nginx that demands a client certificate from our test CA (tests/helpers/
// tls_proxy.ts), in front of the suite's dev server: configured by environment variables as an operator would
// for a Temporal Cloud mTLS namespace, a WordPress publish goes webhook → web tier's client → Temporal → worker →
// link. Without the TLS settings neither gets through: the worker stops naming the address and TLS mode, and the
// webhook answers 503.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { type EntryProcess, startEntry as startEntryProcess } from '../../devkit/harness/entry_process.ts';
import { eventually } from '../../devkit/harness/harness.ts';
import { connectTestTemporal, type TestTemporal, uniqueId } from '../../devkit/harness/temporal.ts';
import { signWebhook } from '../../lib/auth/webhook_signature.ts';
import { randomToken } from '../../lib/shared/crypto.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { getTlsProxyUnavailableReason, startTlsProxy, type TlsProxy } from '../helpers/tls_proxy.ts';

const skip = getTlsProxyUnavailableReason();
// An empty HOME: no ~/.config/temporalio/temporal.toml of this machine takes part.
const home = mkdtempSync(join(tmpdir(), 'lifeline-mtls-home-'));
const apiKey = `ll_test_${randomToken(32)}`;
const webhookSecret = `whsec_test_${randomToken(32)}`;

let temporal: TestTemporal;
let proxy: TlsProxy;
let db: TestDatabase;
const children: EntryProcess[] = [];

function startEntry(script: string, env: Record<string, string>): EntryProcess {
  const entry = startEntryProcess(script, {
    env: {
      HOME: home,
      DATABASE_URL: db.url,
      BOOTSTRAP_API_KEY: apiKey,
      WORDPRESS_WEBHOOK_SECRET: webhookSecret,
      ADMIN_EMAIL: 'admin@example.test',
      ADMIN_PASSWORD: 'correct horse battery',
      SHORT_BASE_URL: 'http://sho.rt.test',
      LOG_LEVEL: 'info',
      SHUTDOWN_DELAY_MS: '0',
      ...env,
    },
  });
  children.push(entry);
  return entry;
}

const stop = (entry: EntryProcess) => entry.stop({ killAfterMs: 70_000 });

/** The variables an operator sets for an mTLS namespace (here: our proxy, its CA and name, our client pair). */
function mtlsEnv(): Record<string, string> {
  const c = proxy.certificates;
  return {
    TEMPORAL_ADDRESS: proxy.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: c.caPath,
    TEMPORAL_TLS_SERVER_NAME: c.serverName,
    TEMPORAL_TLS_CLIENT_CERT_PATH: c.clientCertPath,
    TEMPORAL_TLS_CLIENT_KEY_PATH: c.clientKeyPath,
  };
}

async function startWeb(env: Record<string, string>): Promise<EntryProcess & { base: string }> {
  const port = await getFreePort();
  const entry = startEntry('main.ts', { PORT: String(port), HOST: '127.0.0.1', ...env });
  const base = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (entry.child.exitCode !== null) throw new Error(`web exited: ${entry.output()}`);
      return (await fetch(`${base}/livez`)).ok ? true : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 200, what: 'the web process' },
  );
  return { ...entry, base };
}

async function publish(base: string, postId: number): Promise<Response> {
  const body = JSON.stringify({
    id: uniqueId('delivery'),
    event: 'post.published',
    site: 'mtls',
    postId,
    permalink: `https://news.example/mtls/${postId}/`,
    title: 'Through the proxy',
    occurredAt: new Date().toISOString(),
  });
  return fetch(`${base}/api/v1/hooks/wordpress`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Lifeline-Signature': await signWebhook(webhookSecret, body, Date.now() / 1000),
    },
    body,
  });
}

describe('the worker and the web tier through a TLS proxy that requires a client certificate', {
  skip,
}, () => {
  before(async () => {
    temporal = await connectTestTemporal();
    const [host, port] = temporal.address.split(':') as [string, string];
    proxy = await startTlsProxy({ target: { host, port: Number(port) } });
    db = await createTestDatabase();
  });
  after(async () => {
    for (const child of children) child.kill();
    await proxy?.close();
    await temporal?.close();
    await db?.drop();
    rmSync(home, { recursive: true, force: true });
  });

  test('without the TLS settings: the worker stops naming where it tried, the webhook answers 503', async () => {
    const worker = startEntry('workers/main.ts', {
      TEMPORAL_ADDRESS: proxy.address,
      TEMPORAL_TASK_QUEUE: uniqueId('mtls-none'),
      WORKER_HEALTH_PORT: '0',
    });
    const code = await Promise.race([
      worker.exited,
      new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 60_000)),
    ]);
    assert.equal(code, 1, worker.output().slice(-3000));
    assert.match(
      worker.output(),
      new RegExp(`cannot connect to Temporal at ${proxy.address} \\(tls: off\\)`),
    );

    const web = await startWeb({
      TEMPORAL_ADDRESS: proxy.address,
      TEMPORAL_TASK_QUEUE: uniqueId('mtls-none'),
    });
    const refused = await publish(web.base, 1);
    assert.equal(refused.status, 503, await refused.clone().text());
    assert.ok(refused.headers.get('retry-after'));
    assert.equal(await stop(web), 0);
  });

  test('with the CA, the server name and the client pair: a publish goes through web, Temporal and worker', async () => {
    const taskQueue = uniqueId('mtls');
    const healthPort = await getFreePort();
    const worker = startEntry('workers/main.ts', {
      ...mtlsEnv(),
      TEMPORAL_TASK_QUEUE: taskQueue,
      WORKER_HEALTH_PORT: String(healthPort),
      WORKER_HEALTH_HOST: '127.0.0.1',
    });
    // Ready = connected through the proxy, both pollers polling, Postgres reachable.
    const ready = await eventually(
      async () => {
        if (worker.child.exitCode !== null) throw new Error(`worker exited: ${worker.output()}`);
        const response = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
        return response.status === 200 ? response.json() : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250, what: `the worker's /readyz` },
    );
    assert.deepEqual(ready, {
      status: 'ready',
      checks: { worker: 'running', pollers: 'polling', temporal: 'ok', postgres: 'ok' },
    });

    const web = await startWeb({ ...mtlsEnv(), TEMPORAL_TASK_QUEUE: taskQueue });
    const accepted = await publish(web.base, 2);
    assert.equal(accepted.status, 202, await accepted.clone().text());
    const link = await eventually(
      async () => {
        const response = await fetch(`${web.base}/api/v1/links/by-post/mtls/2`, {
          headers: { Authorization: `Bearer ${apiKey}` },
        });
        const body =
          response.status === 200 ? ((await response.json()) as { code: string; status: string }) : null;
        return body?.status === 'active' ? body : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the post link minted by the worker' },
    );
    const redirect = await fetch(`${web.base}/${link.code}`, { redirect: 'manual' });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), 'https://news.example/mtls/2/');

    // Both processes logged where and how they connect, and nothing of the key.
    for (const entry of [worker, web]) {
      assert.match(entry.output(), new RegExp(`"address":"${proxy.address}".*"tls":"mutual"`));
      assert.doesNotMatch(entry.output(), /PRIVATE KEY/);
    }
    assert.ok(
      !worker.output().includes(readFileSync(proxy.certificates.clientKeyPath, 'utf8').split('\n')[1]!),
    );
    assert.equal(await stop(web), 0);
    assert.equal(await stop(worker), 0);
  });
});
