import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { signWebhook } from '../../lib/auth/webhook_signature.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { eventually } from '../helpers/harness.ts';

// `npm start` as a new user runs it: no configuration, embedded PGlite, its own Temporal dev server.
const dataDir = mkdtempSync(join(tmpdir(), 'lifeline-start-'));
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(ports: { web: number; temporal: number; ui: number }) {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    PORT: String(ports.web),
    LIFELINE_DATA_DIR: dataDir,
    TEMPORAL_DEV_SERVER_PORT: String(ports.temporal),
    TEMPORAL_DEV_SERVER_UI_PORT: String(ports.ui),
    LOG_LEVEL: 'warn',
  };
  if (process.env.TEMPORAL_CLI) env.TEMPORAL_CLI = process.env.TEMPORAL_CLI;
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: ROOT, env });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  child.stdout!.resume();
  const startedAt = Date.now();
  await eventually(async () => (stderr.includes('Lifeline is running') ? true : undefined), {
    timeoutMs: 120_000,
    intervalMs: 100,
    what: `npm start's banner; output so far:\n${stderr}`,
  });
  return { child, banner: () => stderr, seconds: (Date.now() - startedAt) / 1000 };
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

function isAlive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start (embedded defaults)', () => {
  test('serves a redirect and a signed publish, stops cleanly, and finds its data again', async () => {
    const ports = { web: await getFreePort(), temporal: await getFreePort(), ui: await getFreePort() };
    const base = `http://127.0.0.1:${ports.web}`;
    const first = await start(ports);
    const banner = first.banner();
    const apiKey = /Admin API key:\s+(\S+)/.exec(banner)?.[1];
    const secret = /Webhook secret:\s+(\S+)/.exec(banner)?.[1];
    assert.ok(apiKey && secret, banner);
    assert.match(banner, /Admin login:\s+admin@lifeline\.local \/ \S+/);
    assert.match(banner, new RegExp(`Temporal UI:\\s+http://127.0.0.1:${ports.ui}`));

    const created = await fetch(`${base}/api/v1/links`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/embedded' }),
    });
    assert.equal(created.status, 201);
    const { code } = (await created.json()) as { code: string };
    const redirect = await fetch(`${base}/${code}`, { redirect: 'manual' });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), 'https://example.com/embedded');
    assert.equal((await fetch(`${base}/livez`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    assert.match(banner, /Temporal CLI: .*temporal \(from /, 'says which CLI it runs');

    const event = JSON.stringify({
      id: 'start-test-1',
      event: 'post.published',
      site: 'blog',
      postId: 7,
      permalink: 'https://blog.example/hello/',
      title: 'Hello',
      occurredAt: new Date().toISOString(),
    });
    const hook = await fetch(`${base}/api/v1/hooks/wordpress`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Lifeline-Signature': await signWebhook(secret, event, Date.now() / 1000),
      },
      body: event,
    });
    assert.equal(hook.status, 202);
    const postLink = await eventually(async () => {
      const res = await fetch(`${base}/api/v1/links/by-post/blog/7`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      });
      return res.status === 200 ? ((await res.json()) as { code: string }) : undefined;
    });
    // The publish workflow's history is in the dev server (what Temporal UI shows).
    const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
    const history = await new Client({ connection }).workflow.getHandle('publish:blog:7').fetchHistory();
    const activities = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter(Boolean);
    assert.deepEqual(activities, ['mintCode', 'writeServingStore', 'scanLinkSafety', 'markActive']);
    await connection.close();
    const ui = await fetch(`http://127.0.0.1:${ports.ui}/`);
    assert.equal(ui.status, 200);

    const devServerPid = Number(readFileSync(join(dataDir, 'temporal.pid'), 'utf8'));
    assert.equal(await stop(first.child), 0);
    assert.equal(isAlive(devServerPid), false, 'the dev server must not outlive npm start');

    const second = await start(ports);
    assert.doesNotMatch(second.banner(), /Admin API key|Webhook secret|Admin login/);
    const again = await fetch(`${base}/${postLink.code}`, { redirect: 'manual' });
    assert.equal(again.status, 301);
    assert.equal(again.headers.get('location'), 'https://blog.example/hello/');
    assert.equal(await stop(second.child), 0);
    console.log(
      `npm start: first start ${first.seconds.toFixed(1)} s, second start ${second.seconds.toFixed(1)} s`,
    );
  });

  test('Ctrl-C twice exits at once, and the next start clears the dev server that was left stopping', async () => {
    const ports = { web: await getFreePort(), temporal: await getFreePort(), ui: await getFreePort() };
    const first = await start(ports);
    const devServerPid = Number(readFileSync(join(dataDir, 'temporal.pid'), 'utf8'));
    const exited = new Promise<number | null>((resolve) => first.child.once('exit', (code) => resolve(code)));
    first.child.kill('SIGINT');
    await eventually(async () => (first.banner().includes('SIGINT: shutting down') ? true : undefined), {
      intervalMs: 10,
    });
    // Freeze the dev server so that it is certainly still there ("left stopping") when the next start looks:
    // on an idle machine it would otherwise finish its own SIGTERM before that, and nothing would be shown.
    process.kill(devServerPid, 'SIGSTOP');
    first.child.kill('SIGINT');
    assert.equal(await exited, 130);
    // Started again at once, on the same ports, while that dev server may still be shutting down.
    const second = await start(ports);
    assert.match(second.banner(), /Stopping a Temporal dev server left running by an earlier start/);
    assert.equal(isAlive(devServerPid), false);
    const health = await fetch(`http://127.0.0.1:${ports.web}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(await stop(second.child), 0);
  });

  test('TEMPORAL_ADDRESS set: that Temporal is used and no dev server is started', async () => {
    const address = process.env.LIFELINE_TEST_TEMPORAL_ADDRESS;
    if (!address) return; // run alone: no shared dev server to point at
    const ownData = mkdtempSync(join(tmpdir(), 'lifeline-start-external-'));
    const port = await getFreePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/root',
        PORT: String(port),
        LIFELINE_DATA_DIR: ownData,
        TEMPORAL_ADDRESS: address,
        TEMPORAL_TASK_QUEUE: `start-external-${Date.now()}`,
        LOG_LEVEL: 'warn',
      },
    });
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.stdout.resume();
    try {
      await eventually(async () => (stderr.includes('Lifeline is running') ? true : undefined), {
        timeoutMs: 120_000,
        intervalMs: 100,
        what: `npm start's banner; output so far:\n${stderr}`,
      });
      assert.match(
        stderr,
        new RegExp(`Temporal: ${address}, namespace default, TLS off \\(no embedded dev server\\)`),
      );
      assert.match(stderr, /Temporal UI:\s+\(external Temporal; see TEMPORAL_UI_URL\)/);
      assert.doesNotMatch(stderr, /Starting the Temporal dev server/);
      assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
      assert.equal(await stop(child), 0);
    } finally {
      rmSync(ownData, { recursive: true, force: true });
    }
  });

  test('a Temporal setting that cannot work stops start-up naming it, before anything starts', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        LIFELINE_DATA_DIR: dataDir,
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent/client.pem',
        TEMPORAL_TLS_CLIENT_KEY_PATH: '/nonexistent/client.key',
      },
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 78);
    assert.match(stderr, /TEMPORAL_TLS_CLIENT_CERT_PATH: cannot read \/nonexistent\/client\.pem \(ENOENT/);
    assert.doesNotMatch(stderr, /Starting embedded Postgres/);
  });

  test('a bad configuration value stops start-up naming the variable', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', REDIRECT_STATUS: '303', LIFELINE_DATA_DIR: dataDir },
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.notEqual(code, 0);
    assert.match(stderr, /REDIRECT_STATUS: must be one of 301, 302, 307, 308/);
  });
});
