// `npm start`: the whole product on one machine with no configuration at all (DESIGN.md, "Processes"), as a small
// supervisor of the production processes (ADR 0022). It starts a Temporal dev server (SQLite under .data/, UI on
// 8233), then, unless DATABASE_URL is set, embedded PGlite in a process of its own
// (scripts/embedded_postgres_main.ts); runs the migrations and the bootstrap once (first-run credentials go to a
// 0600 file under .data/ that the banner names; on a terminal the banner shows them too); then the production worker entry (workers/main.ts) and web entry (main.ts) as separate processes with
// DATABASE_URL pointing at PGlite's front, the worker and PGlite at a lower priority than the web process. Ctrl-C
// stops them in order: web, worker, PGlite, dev server. A child that dies on its own takes everything down.

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { guardKnownDriverFaults } from '../boot/driver_faults.ts';
import { reportGeneratedCredentials } from '../boot/first_run_credentials.ts';
import { loadConfigOrExit } from '../boot/load_config.ts';
import { prepareDatabase } from '../boot/prepare_database.ts';
import { onShutdownSignal } from '../boot/shutdown.ts';
import {
  ignoredByEmbeddedTemporal,
  loadTemporalConnectionOrExit,
  usesExternalTemporal,
} from '../boot/temporal_connection.ts';
import { createLogger } from '../lib/shared/logger.ts';
import { temporalEnvShape } from '../lib/shared/temporal_settings.ts';
import { createSql } from '../lib/stores/sql.ts';
import { EMBEDDED_PID_FILE, EMBEDDED_URL_FILE } from './cli_database.ts';
import { type DevServer, getFreePort, startDevServer } from './dev_server.ts';
import type { EmbeddedPostgresReady } from './embedded_postgres_main.ts';
import { type SupervisedProcess, spawnSupervised } from './supervised_process.ts';
import { ensureTemporalCli, ROOT } from './temporal_cli.ts';
import { webNodeFlags } from './web_node_flags.ts';

// Knobs of this script only (not of the product): where embedded state lives and the dev server's ports.
const DATA_DIR = process.env.LIFELINE_DATA_DIR ?? join(ROOT, '.data');
const TEMPORAL_PORT = Number(process.env.TEMPORAL_DEV_SERVER_PORT ?? 7233);
const TEMPORAL_UI_PORT = Number(process.env.TEMPORAL_DEV_SERVER_UI_PORT ?? 8233);

/** Niceness of the background processes (worker, PGlite): redirects on the web process come first. */
const BACKGROUND_NICE = 10;
/** How long each process may take to stop before it is killed (the worker drains for up to 20 s, forced at 60 s). */
const STOP_GRACE_MS = { web: 15_000, worker: 75_000, pglite: 30_000 };
/** How long the children may take to become ready (the worker bundles its workflows first). */
const READY_TIMEOUT_MS = 180_000;
const PGLITE_PID_FILE = join(DATA_DIR, EMBEDDED_PID_FILE);
const PGLITE_URL_FILE = join(DATA_DIR, EMBEDDED_URL_FILE);

const startedAt = Date.now();
const say = (msg: string) => process.stderr.write(`[lifeline] ${msg}\n`);
const config = loadConfigOrExit(process.env);
const logger = createLogger({ level: config.logLevel, name: 'lifeline' });
// A database outage must not kill the process through a postgres.js fault (boot/driver_faults.ts).
guardKnownDriverFaults(logger);
mkdirSync(DATA_DIR, { recursive: true });

let devServer: DevServer | undefined;
let pglite: SupervisedProcess | undefined;
let worker: SupervisedProcess | undefined;
let web: SupervisedProcess | undefined;
/** Set once stopping began (a signal, a failure, a child that died): nothing new starts after it. */
let shuttingDown = false;
/** The exit code once stopped: 1 when a child died or start-up failed. */
let exitCode = 0;

// Whatever way npm start exits (a second Ctrl-C, a failure), no child outlives it: web and worker are killed,
// PGlite is told to close (it checkpoints on its own; the next start waits for it), the dev server to stop.
process.on('exit', () => {
  web?.signal('SIGKILL');
  worker?.signal('SIGKILL');
  pglite?.signal('SIGTERM');
  if (devServer?.child.pid && devServer.child.exitCode === null) {
    try {
      process.kill(-devServer.child.pid, 'SIGTERM');
    } catch {}
  }
});

/** Whether `pid` runs (a zombie, gone but not yet reaped by whoever inherited it, does not). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return true; // no /proc: the signal's answer stands
  }
}

/** Whether `pid` runs our PGlite entry (where /proc says; elsewhere the pid file is trusted). */
function isEmbeddedPostgres(pid: number): boolean {
  if (!existsSync('/proc/self/cmdline')) return true;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('embedded_postgres_main');
  } catch {
    return false;
  }
}

/**
 * Stops a PGlite process an earlier start left behind (it was told to close when that start exited, and may still
 * be closing), and waits until it is gone: two processes must never open the data directory at once.
 */
async function stopStaleEmbeddedPostgres(): Promise<void> {
  if (!existsSync(PGLITE_PID_FILE)) return;
  const pid = Number(readFileSync(PGLITE_PID_FILE, 'utf8').trim());
  if (pid > 0 && isAlive(pid) && isEmbeddedPostgres(pid)) {
    say(`Waiting for the embedded Postgres of an earlier start to close (pid ${pid}).`);
    for (const signal of ['SIGCONT', 'SIGTERM'] as const) {
      try {
        process.kill(pid, signal);
      } catch {}
    }
    const deadline = Date.now() + STOP_GRACE_MS.pglite;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (isAlive(pid)) {
      say(`It did not close within ${STOP_GRACE_MS.pglite / 1000} s: killing it.`);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
      const killedAt = Date.now();
      while (isAlive(pid) && Date.now() - killedAt < 5_000) await new Promise((r) => setTimeout(r, 50));
    }
  }
  rmSync(PGLITE_PID_FILE, { force: true });
}

/** node --import tsx (and, for the product's entries, the guard that stops them when npm start is gone). */
function nodeArgs(entry: string, supervisedEntry: boolean, flags: string[] = []): string[] {
  const guard = pathToFileURL(join(ROOT, 'scripts', 'supervised_child.mjs')).href;
  return [...flags, '--import', 'tsx', ...(supervisedEntry ? ['--import', guard] : []), join(ROOT, entry)];
}

/** A supervised child: its unexpected exit takes everything down with a message saying which one and how. */
function supervise(child: SupervisedProcess): SupervisedProcess {
  void child.exited.then((how) => {
    if (child.stopping || shuttingDown) return;
    say(`the ${child.name} process exited unexpectedly (${how}); stopping everything.`);
    void shutdown(1);
  });
  return child;
}

/** Starts PGlite in its own process and resolves with its URL once it serves. */
async function startEmbeddedPostgresProcess(): Promise<string> {
  await stopStaleEmbeddedPostgres();
  say(`Starting embedded Postgres (PGlite, data in ${DATA_DIR}/pglite)...`);
  const child = supervise(
    spawnSupervised({
      name: 'pglite',
      args: nodeArgs('scripts/embedded_postgres_main.ts', false).concat(
        join(DATA_DIR, 'pglite'),
        PGLITE_URL_FILE,
        PGLITE_PID_FILE,
      ),
      env: withoutUndefined(process.env),
      cwd: ROOT,
      nice: BACKGROUND_NICE,
    }),
  );
  pglite = child;
  return new Promise<string>((resolve) => {
    child.child.on('message', (message) => {
      const ready = message as EmbeddedPostgresReady | undefined;
      if (ready?.kind === 'ready') resolve(ready.url);
    });
  });
}

function withoutUndefined(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
}

/**
 * The environment of the web and worker processes: ours, with DATABASE_URL set, and with our own dev server as
 * their only Temporal (every other connection setting removed, and no profile file: the dev server speaks plain
 * gRPC without keys, boot/temporal_connection.ts).
 */
function childEnv(
  databaseUrl: string,
  devServerAddress: string | undefined,
  temporalUiUrl: string | undefined,
) {
  const env = withoutUndefined(process.env);
  if (devServerAddress) {
    for (const name of Object.keys(temporalEnvShape)) if (name !== 'TEMPORAL_NAMESPACE') delete env[name];
    for (const name of Object.keys(env)) if (name.startsWith('TEMPORAL_GRPC_META_')) delete env[name];
    env.TEMPORAL_ADDRESS = devServerAddress;
    env.TEMPORAL_CONFIG_FILE = writeNoProfileFile();
  }
  if (temporalUiUrl) env.TEMPORAL_UI_URL = temporalUiUrl;
  env.DATABASE_URL = databaseUrl;
  return env;
}

/**
 * A Temporal profile file with an empty default profile, for the web and worker processes under the embedded dev
 * server: with it they never read the user's ~/.config/temporalio/temporal.toml (often a production namespace).
 */
function writeNoProfileFile(): string {
  const file = join(DATA_DIR, 'temporal-client.toml');
  writeFileSync(
    file,
    '# Written by npm start: its web and worker processes reach its own dev server, never a profile of yours.\n' +
      '[profile.default]\n',
  );
  return file;
}

/** Resolves once `url` answers 200 (a child's /readyz); a stop in the meantime leaves it pending. */
async function waitUntilReady(name: string, url: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (shuttingDown) return new Promise(() => {});
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return;
      last = `${response.status} ${(await response.text()).slice(0, 200)}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the ${name} process was not ready within ${READY_TIMEOUT_MS / 1000} s (${url}: ${last})`);
}

/** A host to reach a server listening on `host` from this machine. */
function reachableHost(host: string): string {
  if (host === '' || host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

let stopped: Promise<void> | undefined;
/** Stops what runs, in order: the web stops accepting, the worker drains, PGlite closes, the dev server stops. */
function stopAll(): Promise<void> {
  stopped ??= (async () => {
    shuttingDown = true;
    const problems: string[] = [];
    const stopChild = async (child: SupervisedProcess | undefined, graceMs: number, done: string) => {
      if (!child) return;
      const wasGone = child.gone();
      const how = await child.stop(graceMs);
      if (!wasGone) say(`${done} (${how}).`);
      // Killed by our SIGTERM itself: it was stopped before its entry set up its handler (still starting).
      if (!wasGone && how !== 'exit 0' && how !== 'signal SIGTERM') problems.push(`${child.name}: ${how}`);
    };
    await stopChild(web, STOP_GRACE_MS.web, 'web stopped accepting and closed; draining the worker');
    await stopChild(worker, STOP_GRACE_MS.worker, 'worker drained and stopped; closing PGlite');
    await stopChild(pglite, STOP_GRACE_MS.pglite, 'PGlite checkpointed and closed');
    if (pglite) rmSync(PGLITE_URL_FILE, { force: true });
    if (devServer) {
      await devServer.stop();
      say('Temporal dev server stopped.');
    }
    if (problems.length > 0) throw new Error(`not every process stopped cleanly: ${problems.join(', ')}`);
  })();
  return stopped;
}

/** Stops everything and exits with `code` (or 1 when stopping failed). */
async function shutdown(code: number): Promise<never> {
  exitCode = Math.max(exitCode, code);
  try {
    await stopAll();
  } catch (error) {
    say(error instanceof Error ? error.message : String(error));
    exitCode = Math.max(exitCode, 1);
  }
  say(exitCode === 0 ? 'stopped cleanly.' : 'stopped.');
  process.exit(exitCode);
}

function banner(credentialsNotice: string, temporalUiUrl: string | undefined, databaseLabel: string) {
  const lines = [
    '',
    `Lifeline is running (started in ${((Date.now() - startedAt) / 1000).toFixed(1)} s).`,
    `  Short links:  ${config.shortBaseUrl}/<code>`,
    `  Editor UI:    ${config.appBaseUrl}/ui`,
    `  API:          ${config.appBaseUrl}/api/v1`,
    `  Temporal UI:  ${temporalUiUrl ?? '(external Temporal; see TEMPORAL_UI_URL)'}`,
    `  Database:     ${databaseLabel}`,
    `  Processes:    ${[
      web && `web ${web.pid}`,
      worker && `worker ${worker.pid} (nice ${worker.nice})`,
      pglite && `PGlite ${pglite.pid} (nice ${pglite.nice})`,
      devServer && `Temporal dev server ${devServer.child.pid}`,
    ]
      .filter(Boolean)
      .join(', ')}`,
  ];
  // First-run credentials: the file's path always, the credentials themselves on a terminal only.
  if (credentialsNotice) lines.push(credentialsNotice.trimEnd());
  lines.push('', 'Press Ctrl-C to stop.', '');
  process.stderr.write(`${lines.join('\n')}\n`);
}

/** Resolves never once stopping began (the stop exits the process); lets start-up give way at each step. */
const unlessStopping = async <T>(step: Promise<T>): Promise<T> => {
  const value = await step;
  if (shuttingDown) return new Promise<T>(() => {});
  return value;
};

async function main() {
  // An external Temporal only when the environment names one (TEMPORAL_ADDRESS, TEMPORAL_PROFILE or
  // TEMPORAL_CONFIG_FILE); otherwise the embedded dev server (boot/temporal_connection.ts says why). Bad
  // settings stop here (exit 78), before anything starts.
  const external = usesExternalTemporal(config)
    ? loadTemporalConnectionOrExit(config, process.env, logger)
    : undefined;
  let temporalUiUrl = config.temporal.uiUrl;
  let devServerAddress: string | undefined;
  if (external) {
    const { address, namespace, tls, apiKey } = external.connection.summary;
    say(
      `Temporal: ${address}, namespace ${namespace}, TLS ${tls}${apiKey ? ', API key' : ''} (no embedded dev server).`,
    );
  } else {
    const ignored = ignoredByEmbeddedTemporal(config);
    if (ignored.length > 0)
      say(`Ignoring ${ignored.join(', ')}: without TEMPORAL_ADDRESS the embedded dev server is used.`);
    const cli = await unlessStopping(ensureTemporalCli(say));
    say(`Starting the Temporal dev server (state in ${DATA_DIR}/temporal.sqlite)...`);
    devServer = await startDevServer({
      cli,
      port: TEMPORAL_PORT,
      uiPort: TEMPORAL_UI_PORT,
      dbFilename: join(DATA_DIR, 'temporal.sqlite'),
      pidFile: join(DATA_DIR, 'temporal.pid'),
      log: say,
    });
    if (shuttingDown) return;
    devServerAddress = devServer.address;
    temporalUiUrl ??= `http://127.0.0.1:${TEMPORAL_UI_PORT}`;
  }

  const databaseUrl = config.databaseUrl ?? (await unlessStopping(startEmbeddedPostgresProcess()));
  // Migrations and the bootstrap once, here: the first-run credentials are ours to hand over (the entries run
  // the same step again, finding nothing to do).
  const sql = createSql({ url: databaseUrl, max: 2, applicationName: 'lifeline-start' });
  const generated = await unlessStopping(
    prepareDatabase(config, databaseUrl, sql, logger).finally(() => sql.end({ timeout: 5 })),
  );
  // Written to the data folder now (a start that fails later must not lose them), announced in the banner.
  let credentialsNotice = '';
  reportGeneratedCredentials(generated, {
    dataDir: DATA_DIR,
    interactive: process.stderr.isTTY === true,
    write: (s) => {
      credentialsNotice += s;
    },
  });

  const env = childEnv(databaseUrl, devServerAddress, temporalUiUrl);
  // The worker's probes on loopback and a free port unless configured (npm start may run beside anything).
  const workerHealthHost = process.env.WORKER_HEALTH_HOST ? config.workerHealth.host : '127.0.0.1';
  const workerHealthPort = process.env.WORKER_HEALTH_PORT ? config.workerHealth.port : await getFreePort();
  say('Starting the worker and the web server...');
  worker = supervise(
    spawnSupervised({
      name: 'worker',
      args: nodeArgs('workers/main.ts', true),
      env: { ...env, WORKER_HEALTH_HOST: workerHealthHost, WORKER_HEALTH_PORT: String(workerHealthPort) },
      cwd: ROOT,
      nice: BACKGROUND_NICE,
    }),
  );
  web = supervise(
    spawnSupervised({
      name: 'web',
      // The web tier's V8 flags as `npm run web` has them (package.json).
      args: nodeArgs('main.ts', true, webNodeFlags(ROOT)),
      // One machine, no load balancer to wait for: on a stop, readiness turns 503 and the server closes at once.
      env: { ...env, SHUTDOWN_DELAY_MS: '0' },
      cwd: ROOT,
    }),
  );
  await unlessStopping(
    Promise.all([
      waitUntilReady('web', `http://${reachableHost(config.host)}:${config.port}/readyz`),
      waitUntilReady('worker', `http://${reachableHost(workerHealthHost)}:${workerHealthPort}/readyz`),
    ]),
  );
  banner(
    credentialsNotice,
    temporalUiUrl,
    config.databaseUrl ? 'DATABASE_URL' : `embedded PGlite (${DATA_DIR}/pglite)`,
  );
}

// A signal at any point stops what has started, in order; a second one exits at once (code 130).
onShutdownSignal(async () => {
  await stopAll();
  if (exitCode !== 0) {
    say('stopped.');
    process.exit(exitCode);
  }
  say('stopped cleanly.');
}, say);

main().catch(async (error) => {
  if (shuttingDown) return;
  say(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
  if (!(error instanceof Error && /Port \d+ is taken|No Temporal CLI/.test(error.message)))
    console.error(error);
  await shutdown(1);
});
