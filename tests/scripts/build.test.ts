// `npm run build` makes JavaScript that runs on Node alone: the build is laid out as production lays it out
// (dist/, migrations/, scripts/lifeline.sh, node_modules without tsx or esbuild) in a folder of its own, and the
// web tier and the worker started from it by scripts/lifeline.sh serve a redirect, the prebuilt islands and a
// signed publish (the worker runs workflows from the prebuilt bundle: the source it would bundle is not there),
// then drain and exit 0 on SIGTERM. The worker traces (OTEL_EXPORTER_OTLP_ENDPOINT to a loopback receiver), so it
// runs the traced prebuilt bundle; the web tier does not, and its bundle imports nothing of OpenTelemetry at start.
// WordPress post IDs 773101–773109 are this file's.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { type OtlpCollectorFake, startOtlpCollectorFake } from '../../devkit/fakes/otlp_collector_fake.ts';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { connectTestTemporal, type TestTemporal, uniqueId } from '../../devkit/harness/temporal.ts';
import { insertLink } from '../../lib/stores/link_store.ts';
import { buildDist } from '../../scripts/build.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';
import { webNodeFlags, workerNodeFlags } from '../../scripts/web_node_flags.ts';
import {
  assertRedirect,
  assertSignedPublish,
  type ShippedSecrets,
  shippedSecrets,
  waitReady,
} from '../helpers/shipped_checks.ts';

/** What production installs lacks: the TypeScript runtime and the bundler (and npm's links to them). */
const NOT_SHIPPED = new Set(['tsx', 'esbuild', '@esbuild', '.bin', '.package-lock.json']);

let app: string;
let db: TestDatabase;
let temporal: TestTemporal;
let collector: OtlpCollectorFake;
const running: ChildProcess[] = [];

before(async () => {
  app = mkdtempSync(join(tmpdir(), 'lifeline-built-'));
  await buildDist({ outDir: join(app, 'dist') });
  cpSync(join(ROOT, 'migrations'), join(app, 'migrations'), { recursive: true });
  mkdirSync(join(app, 'scripts'));
  cpSync(join(ROOT, 'scripts', 'lifeline.sh'), join(app, 'scripts', 'lifeline.sh'));
  mkdirSync(join(app, 'node_modules'));
  for (const name of readdirSync(join(ROOT, 'node_modules')))
    if (!NOT_SHIPPED.has(name))
      symlinkSync(join(ROOT, 'node_modules', name), join(app, 'node_modules', name));
  db = await createTestDatabase();
  temporal = await connectTestTemporal();
  collector = await startOtlpCollectorFake();
});

after(async () => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await temporal?.close();
  await collector?.stop();
  await db?.drop();
  if (app) rmSync(app, { recursive: true, force: true });
});

/** `scripts/lifeline.sh <role>` in the built tree, on this Node, with no NODE_OPTIONS and only `env`. */
function startBuilt(role: string, env: Record<string, string>) {
  const child = spawn('sh', [join(app, 'scripts', 'lifeline.sh'), role], {
    cwd: tmpdir(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: app, ...env },
  });
  running.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

test('the built tree cannot load tsx or esbuild', () => {
  for (const name of ['tsx', 'esbuild']) {
    const tried = spawnSync(process.execPath, ['--input-type=module', '-e', `await import('${name}')`], {
      cwd: join(app, 'dist'),
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    });
    assert.notEqual(tried.status, 0, `${name} resolved from dist/`);
    assert.match(tried.stderr, /ERR_MODULE_NOT_FOUND/);
  }
  // Nothing of ours is left as TypeScript for Node to load.
  for (const file of readdirSync(join(app, 'dist')).filter((f) => f.endsWith('.mjs')))
    assert.doesNotMatch(readFileSync(join(app, 'dist', file), 'utf8'), /from ["'][^"']+\.tsx?["']/, file);
});

test('the traced workflow bundle has the tracing interceptors; the untraced one and the entries do not load them', () => {
  const dist = join(app, 'dist');
  // Asserted on presence, not printed: a bundle is megabytes.
  const has = (file: string, text: string) => readFileSync(join(dist, file), 'utf8').includes(text);
  assert.ok(
    has('workflow-bundle-traced.js', 'OpenTelemetryInboundInterceptor'),
    'traced bundle has the interceptors',
  );
  assert.ok(!has('workflow-bundle.js', 'OpenTelemetryInboundInterceptor'), 'the untraced bundle has none');
  assert.ok(!has('workflow-bundle.js', '@opentelemetry/sdk-trace-base'), 'the untraced bundle has no SDK');
  // Only dynamic imports: a static one would load OpenTelemetry at every start, traced or not.
  for (const entry of ['web.mjs', 'worker.mjs']) {
    const staticImports = readFileSync(join(dist, entry), 'utf8').match(/^import\b[^;]*;/gm) ?? [];
    const otel = staticImports.filter((line) => /["']@(opentelemetry|temporalio\/interceptors)/.test(line));
    assert.deepEqual(otel, [], `${entry} imports none of OpenTelemetry statically`);
    assert.ok(staticImports.length > 0, `${entry}'s static imports were found (the check can fail)`);
  }
});

test('web and worker from dist/ serve a redirect and a signed publish, then drain and exit 0', async () => {
  const secrets: ShippedSecrets = shippedSecrets();
  const [webPort, healthPort] = [await getFreePort(), await getFreePort()];
  const base = `http://127.0.0.1:${webPort}`;
  const common = {
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: uniqueId('built'),
    BOOTSTRAP_API_KEY: secrets.apiKey,
    WORDPRESS_WEBHOOK_SECRET: secrets.webhookSecret,
    ADMIN_EMAIL: 'admin@example.test',
    ADMIN_PASSWORD: 'correct horse battery',
    SHORT_BASE_URL: base,
    LIFELINE_DATA_DIR: join(app, 'data'),
    REDIS_URL: process.env.LIFELINE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `built-${randomUUID().slice(0, 8)}:`,
    LOG_LEVEL: 'info',
  };
  const worker = startBuilt('worker', {
    ...common,
    WORKER_HEALTH_HOST: '127.0.0.1',
    WORKER_HEALTH_PORT: String(healthPort),
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
  });
  const web = startBuilt('web', {
    ...common,
    HOST: '127.0.0.1',
    PORT: String(webPort),
    SHUTDOWN_DELAY_MS: '0',
  });
  await waitReady(`${base}/readyz`, web.output);
  await waitReady(`http://127.0.0.1:${healthPort}/readyz`, worker.output);

  // Node runs the bundles themselves, each with its npm script's Node flags, and no TypeScript loader.
  const commandOf = (child: ChildProcess) => readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
  assert.deepEqual(commandOf(web.child).slice(1), [...webNodeFlags(ROOT), 'dist/web.mjs', '']);
  assert.deepEqual(commandOf(worker.child).slice(1), [...workerNodeFlags(ROOT), 'dist/worker.mjs', '']);

  await insertLink(db.sql, {
    code: 'built1',
    targetUrl: 'https://news.example/built',
    status: 'active',
    origin: 'api',
    owner: 'test',
  });
  await assertRedirect(base, 'built1', 'https://news.example/built');
  // The islands come from the build, not from a bundler at start.
  const islands = await fetch(`${base}/static/islands.js`);
  assert.equal(islands.status, 200);
  assert.deepEqual(
    new Uint8Array(await islands.arrayBuffer()),
    new Uint8Array(readFileSync(join(app, 'dist', 'static', 'islands.js'))),
  );

  await assertSignedPublish(base, secrets, {
    site: 'built',
    postId: 773101,
    permalink: 'https://news.example/2026/12/built-773101/',
  });

  web.child.kill('SIGTERM');
  worker.child.kill('SIGTERM');
  // The traced bundle ran the publish; its workflow span left the sandbox (flushed at shutdown at the latest).
  await worker.exited;
  assert.ok(
    collector
      .spans()
      .some((s) => s.name === 'RunWorkflow:publishPostWorkflow' && s.service === 'lifeline-worker'),
    `the publish workflow's span; seen: ${collector
      .spans()
      .map((s) => s.name)
      .join(', ')}`,
  );
  assert.equal(await web.exited, 0, web.output().slice(-3000));
  assert.equal(await worker.exited, 0, worker.output().slice(-3000));
  assert.match(web.output(), /SIGTERM: drained, exiting 0/);
  assert.match(worker.output(), /SIGTERM: drained, exiting 0/);
  assert.doesNotMatch(`${web.output()}${worker.output()}`, /"level":(50|60)/);
});
