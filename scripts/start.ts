// `npm start`: the whole product on one machine with no configuration at all (DESIGN.md, "Processes"), as a small
// supervisor of the production processes (ADR 0022). It starts a Temporal dev server (SQLite under .data/, UI on
// 8233), then, unless DATABASE_URL is set, embedded PGlite in a process of its own
// (scripts/embedded_postgres_main.ts); runs the migrations and the bootstrap once (first-run credentials go to a
// 0600 file under .data/ that the banner names; on a terminal the banner shows them too); then the production worker entry (workers/main.ts) and web entry (main.ts) as separate processes with
// DATABASE_URL pointing at PGlite's front, the worker and PGlite at a lower priority than the web process. Ctrl-C
// stops them in order: web, worker, PGlite, dev server. A child that dies on its own takes everything down.

import { mkdirSync, rmSync } from 'node:fs';
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
import { createSql } from '../lib/stores/sql.ts';
import { EMBEDDED_PID_FILE, EMBEDDED_URL_FILE } from './cli_database.ts';
import { type DevServer, getFreePort, startDevServer } from './dev_server.ts';
import type { EmbeddedPostgresReady } from './embedded_postgres_main.ts';
import { stopStaleEmbeddedPostgres } from './stale_embedded_postgres.ts';
import { printBanner } from './start_banner.ts';
import { childEnv, withoutUndefined } from './start_child_env.ts';
import { type SupervisedProcess, spawnSupervised } from './supervised_process.ts';
import { ensureTemporalCli, ROOT } from './temporal_cli.ts';
import { reachableHost, waitUntilReady } from './wait_until_ready.ts';
import { webNodeFlags, workerNodeFlags } from './web_node_flags.ts';

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
const stopping = () => shuttingDown;
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
  await stopStaleEmbeddedPostgres(PGLITE_PID_FILE, STOP_GRACE_MS.pglite, say);
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

  const env = childEnv(DATA_DIR, databaseUrl, devServerAddress, temporalUiUrl);
  // The worker's probes on loopback and a free port unless configured (npm start may run beside anything).
  const workerHealthHost = process.env.WORKER_HEALTH_HOST ? config.workerHealth.host : '127.0.0.1';
  const workerHealthPort = process.env.WORKER_HEALTH_PORT ? config.workerHealth.port : await getFreePort();
  say('Starting the worker and the web server...');
  worker = supervise(
    spawnSupervised({
      name: 'worker',
      // The worker's V8 flags as `npm run worker` has them (package.json): its heap bound (ADR 0105).
      args: nodeArgs('workers/main.ts', true, workerNodeFlags(ROOT)),
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
      waitUntilReady(
        'web',
        `http://${reachableHost(config.host)}:${config.port}/readyz`,
        READY_TIMEOUT_MS,
        stopping,
      ),
      waitUntilReady(
        'worker',
        `http://${reachableHost(workerHealthHost)}:${workerHealthPort}/readyz`,
        READY_TIMEOUT_MS,
        stopping,
      ),
    ]),
  );
  printBanner({
    config,
    startedAt,
    temporalUiUrl,
    databaseLabel: config.databaseUrl ? 'DATABASE_URL' : `embedded PGlite (${DATA_DIR}/pglite)`,
    processes: [
      web && `web ${web.pid}`,
      worker && `worker ${worker.pid} (nice ${worker.nice})`,
      pglite && `PGlite ${pglite.pid} (nice ${pglite.nice})`,
      devServer && `Temporal dev server ${devServer.child.pid}`,
    ],
    credentialsNotice,
  });
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
