import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { eventually } from '../../devkit/harness/harness.ts';
import { activitySteps } from '../../devkit/harness/temporal.ts';
import { signWebhook } from '../../lib/auth/webhook_signature.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { webNodeFlags, workerNodeFlags } from '../../scripts/web_node_flags.ts';

// `npm start` as a new user runs it: no configuration, embedded PGlite, its own Temporal dev server.
const dataDir = mkdtempSync(join(tmpdir(), 'lifeline-start-'));
const children: ChildProcess[] = [];
// A test that fails part-way stops what it started, so that the next one does not meet its dev server holding the
// same data directory's SQLite file.
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
});
after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * How long a start may take to print its banner. Alone it takes well under a minute; but npm start runs the
 * worker and PGlite at nice 10, so beside other tests (at nice 0) they get little CPU: with two busy loops beside
 * it, a first start printed its banner after 128 s.
 */
const BANNER_TIMEOUT_MS = 240_000;

async function start(ports: { web: number; temporal: number; ui: number }, data = dataDir) {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    PORT: String(ports.web),
    LIFELINE_DATA_DIR: data,
    TEMPORAL_DEV_SERVER_PORT: String(ports.temporal),
    TEMPORAL_DEV_SERVER_UI_PORT: String(ports.ui),
    LOG_LEVEL: 'warn',
    // An hour: a change seen by the web process within the test came over the invalidation bus, not by expiry.
    RESOLVER_CACHE_TTL_MS: '3600000',
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
  // A start that gave up says why at once, rather than after the whole timeout.
  const outcome = await eventually(
    async () =>
      stderr.includes('Lifeline is running') ? 'running' : child.exitCode !== null ? 'exited' : undefined,
    {
      timeoutMs: BANNER_TIMEOUT_MS,
      intervalMs: 100,
      what: () => `npm start's banner; output so far:\n${stderr}`,
    },
  );
  if (outcome === 'exited') throw new Error(`npm start exited with ${child.exitCode}:\n${stderr}`);
  return { child, banner: () => stderr, seconds: (Date.now() - startedAt) / 1000 };
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

/** Whether `pid` still runs (a zombie, killed and not yet reaped by whoever inherited it, does not). */
function isAlive(pid: number) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

/** The pids of the banner's process list. */
function processesOf(banner: string): { web: number; worker: number; pglite: number; devServer: number } {
  const line = /Processes:\s+(.*)/.exec(banner)?.[1] ?? '';
  const pid = (name: string) => Number(new RegExp(`${name} (\\d+)`).exec(line)?.[1]);
  return {
    web: pid('web'),
    worker: pid('worker'),
    pglite: pid('PGlite'),
    devServer: pid('Temporal dev server'),
  };
}

/** A process's niceness, from /proc/<pid>/stat (field 19). */
function niceOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** Signs and sends a WordPress event; returns the status. */
async function sendEvent(base: string, secret: string, event: Record<string, unknown>): Promise<number> {
  const body = JSON.stringify(event);
  const res = await fetch(`${base}/api/v1/hooks/wordpress`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Lifeline-Signature': await signWebhook(secret, body, Date.now() / 1000),
    },
    body,
  });
  await res.body?.cancel();
  return res.status;
}

describe('npm start (embedded defaults)', () => {
  test('serves a redirect and a signed publish, stops cleanly, and finds its data again', async () => {
    const ports = { web: await getFreePort(), temporal: await getFreePort(), ui: await getFreePort() };
    const base = `http://127.0.0.1:${ports.web}`;
    const first = await start(ports);
    const banner = first.banner();
    // First-run credentials are in a file only this user can read; the banner (not a terminal here) names it.
    const credentialsFile = join(dataDir, 'first-run-credentials.txt');
    const credentials = readFileSync(credentialsFile, 'utf8');
    const apiKey = /Admin API key:\s+(\S+)/.exec(credentials)?.[1];
    const secret = /Webhook secret:\s+(\S+)/.exec(credentials)?.[1];
    const password = /Admin login:\s+admin@lifeline\.local \/ (\S+)/.exec(credentials)?.[1];
    assert.ok(apiKey && secret && password, credentials);
    assert.equal(statSync(credentialsFile).mode & 0o777, 0o600);
    assert.ok(banner.includes(credentialsFile), banner);
    for (const value of [apiKey, secret, password]) assert.ok(!banner.includes(value), banner);
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

    assert.equal(
      await sendEvent(base, secret, {
        id: 'start-test-1',
        event: 'post.published',
        site: 'blog',
        postId: 7,
        permalink: 'https://blog.example/hello/',
        title: 'Hello',
        occurredAt: new Date().toISOString(),
      }),
      202,
    );
    const postLink = await eventually(async () => {
      const res = await fetch(`${base}/api/v1/links/by-post/blog/7`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      });
      return res.status === 200 ? ((await res.json()) as { code: string }) : undefined;
    });
    // The publish workflow's history is in the dev server (what Temporal UI shows). Its local steps are recorded
    // when the workflow task that ran them completes, after the link row is already readable: wait for the end.
    const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
    const publish = new Client({ connection }).workflow.getHandle('publish:blog:7');
    await publish.result();
    const history = await publish.fetchHistory();
    assert.deepEqual(activitySteps(history.events), [
      'mintCode',
      'writeServingStore',
      'scanLinkSafety',
      'markActive',
    ]);
    await connection.close();
    const ui = await fetch(`http://127.0.0.1:${ports.ui}/`);
    assert.equal(ui.status, 200);

    // Separate processes: the worker and PGlite run niced below the web process.
    const pids = processesOf(banner);
    assert.ok(pids.web && pids.worker && pids.pglite && pids.devServer, banner);
    assert.equal(niceOf(pids.web), niceOf(process.pid));
    assert.equal(niceOf(pids.worker), Math.min(19, niceOf(process.pid) + 10));
    assert.equal(niceOf(pids.pglite), Math.min(19, niceOf(process.pid) + 10));
    // The web process runs with `npm run web`'s Node flags (package.json), the worker with `npm run worker`'s.
    const argsOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    for (const flag of webNodeFlags(ROOT)) {
      assert.ok(argsOf(pids.web).includes(flag), `web process lacks ${flag}: ${argsOf(pids.web).join(' ')}`);
      assert.ok(!argsOf(pids.worker).includes(flag));
    }
    for (const flag of workerNodeFlags(ROOT)) {
      assert.ok(argsOf(pids.worker).includes(flag), `worker lacks ${flag}: ${argsOf(pids.worker).join(' ')}`);
    }

    // An edit through the API shows at once (the web process that made it drops its copy).
    const edited = await fetch(`${base}/api/v1/links/${code}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/edited' }),
    });
    assert.equal(edited.status, 200, await edited.text());
    const afterEdit = await fetch(`${base}/${code}`, { redirect: 'manual' });
    assert.equal(afterEdit.headers.get('location'), 'https://example.com/edited');

    // A change the worker makes (WordPress moved the post) reaches the web process's cache over LISTEN/NOTIFY
    // through PGlite's front, long before the hour-long cache TTL set above.
    const cached = await fetch(`${base}/${postLink.code}`, { redirect: 'manual' });
    assert.equal(cached.headers.get('location'), 'https://blog.example/hello/');
    const moved = 'https://blog.example/hello-moved/';
    assert.equal(
      await sendEvent(base, secret, {
        id: 'start-test-2',
        event: 'post.updated',
        site: 'blog',
        postId: 7,
        permalink: moved,
        title: 'Hello',
        occurredAt: new Date(Date.now() + 1_000).toISOString(),
      }),
      202,
    );
    const movedAfter = Date.now();
    await eventually(
      async () => {
        const res = await fetch(`${base}/${postLink.code}`, { redirect: 'manual' });
        return res.headers.get('location') === moved ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'the web process to answer the moved permalink' },
    );
    console.log(`npm start: a worker-side change reached the web's answer in ${Date.now() - movedAfter} ms`);

    const shutdownFrom = first.banner().length;
    assert.equal(await stop(first.child), 0);
    assert.equal(isAlive(pids.devServer), false, 'the dev server must not outlive npm start');
    for (const pid of [pids.web, pids.worker, pids.pglite]) assert.equal(isAlive(pid), false);
    // In order: web, worker, PGlite, dev server; and nothing failing on the way (a worker that lost its
    // database before it drained would say "terminated" or CONNECTION_ENDED).
    const shutdown = first.banner().slice(shutdownFrom);
    const steps = [
      'SIGTERM: shutting down',
      'web stopped accepting and closed; draining the worker (exit 0)',
      'worker drained and stopped; closing PGlite (exit 0)',
      'PGlite checkpointed and closed (exit 0)',
      'Temporal dev server stopped.',
      'stopped cleanly.',
    ].map((step) => shutdown.indexOf(step));
    assert.ok(
      steps.every((at, i) => at >= 0 && (i === 0 || at > steps[i - 1]!)),
      `shutdown out of order:\n${shutdown}`,
    );
    assert.doesNotMatch(shutdown, /terminated|CONNECTION_ENDED|ECONNRESET|ECONNREFUSED|"level":(50|60)/i);

    const second = await start(ports);
    assert.doesNotMatch(second.banner(), /Admin API key|Webhook secret|Admin login/);
    const again = await fetch(`${base}/${postLink.code}`, { redirect: 'manual' });
    assert.equal(again.status, 301);
    assert.equal(again.headers.get('location'), moved);
    assert.equal(await stop(second.child), 0);
    console.log(
      `npm start: first start ${first.seconds.toFixed(1)} s, second start ${second.seconds.toFixed(1)} s`,
    );
  });

  test('Ctrl-C twice exits at once, and the next start clears the dev server that was left stopping', async () => {
    const ports = { web: await getFreePort(), temporal: await getFreePort(), ui: await getFreePort() };
    const first = await start(ports);
    const devServerPid = Number(readFileSync(join(dataDir, 'temporal.pid'), 'utf8'));
    const pids = processesOf(first.banner());
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
    // Web and worker are killed on the spot; PGlite was told to close and does so on its own.
    await eventually(async () => (!isAlive(pids.web) && !isAlive(pids.worker) ? true : undefined), {
      timeoutMs: 5_000,
      what: 'the web and worker processes to be gone',
    });
    // Started again at once, on the same ports, while that dev server may still be shutting down.
    const second = await start(ports);
    assert.match(second.banner(), /Stopping a Temporal dev server left running by an earlier start/);
    assert.equal(isAlive(devServerPid), false);
    const health = await fetch(`http://127.0.0.1:${ports.web}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(await stop(second.child), 0);
  });

  test('a child that dies takes npm start down with a message, and nothing is left running', async () => {
    const ports = { web: await getFreePort(), temporal: await getFreePort(), ui: await getFreePort() };
    const run = await start(ports);
    const pids = processesOf(run.banner());
    const exited = new Promise<number | null>((resolve) => run.child.once('exit', (code) => resolve(code)));
    process.kill(pids.worker, 'SIGKILL');
    assert.equal(await exited, 1);
    const output = run.banner();
    assert.match(output, /the worker process exited unexpectedly \(signal SIGKILL\); stopping everything/);
    assert.match(output, /web stopped accepting and closed/);
    assert.match(output, /PGlite checkpointed and closed \(exit 0\)/);
    for (const pid of [pids.web, pids.pglite, pids.devServer]) assert.equal(isAlive(pid), false);
  });

  test('npm start killed hard leaves nothing behind: a start elsewhere gets the same ports', async () => {
    const ports = { web: await getFreePort(), temporal: await getFreePort(), ui: await getFreePort() };
    const run = await start(ports);
    const pids = processesOf(run.banner());
    for (const pid of Object.values(pids)) assert.ok(pid > 0 && isAlive(pid), `${pid} runs`);
    const exited = new Promise<number | null>((resolve) =>
      run.child.once('exit', (_code, signal) => resolve(signal as never)),
    );
    // No handler runs on SIGKILL: each child must notice on its own that its supervisor is gone.
    run.child.kill('SIGKILL');
    await exited;
    await eventually(async () => (Object.values(pids).every((pid) => !isAlive(pid)) ? true : undefined), {
      timeoutMs: 60_000,
      what: `every child of the killed npm start to end: ${JSON.stringify(pids)}`,
    });
    // Another checkout (its own data directory, so no pid file of the first to clean up) on the same ports.
    const elsewhere = mkdtempSync(join(tmpdir(), 'lifeline-start-elsewhere-'));
    try {
      const second = await start(ports, elsewhere);
      assert.doesNotMatch(second.banner(), /is taken/);
      assert.equal((await fetch(`http://127.0.0.1:${ports.web}/readyz`)).status, 200);
      assert.equal(await stop(second.child), 0);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
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
        timeoutMs: BANNER_TIMEOUT_MS,
        intervalMs: 100,
        what: () => `npm start's banner; output so far:\n${stderr}`,
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
