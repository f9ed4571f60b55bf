// `npm start`: the whole product on one machine with no configuration at all (DESIGN.md, "Processes").
// A Temporal dev server (SQLite under .data/, UI on 8233), embedded PGlite unless DATABASE_URL is set,
// migrations, the worker and the web server, then a banner. Ctrl-C stops them in order.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { guardKnownDriverFaults } from '../boot/driver_faults.ts';
import { loadConfigOrExit } from '../boot/load_config.ts';
import { prepareDatabase } from '../boot/prepare_database.ts';
import { onShutdownSignal, startDraining } from '../boot/shutdown.ts';
import {
  ignoredByEmbeddedTemporal,
  loadEmbeddedTemporalConnection,
  loadTemporalConnectionOrExit,
  usesExternalTemporal,
} from '../boot/temporal_connection.ts';
import { createConfiguredResolver } from '../lib/redirect/create_resolver.ts';
import { createLogger } from '../lib/shared/logger.ts';
import { createMetrics } from '../lib/shared/metrics.ts';
import { createSql } from '../lib/stores/sql.ts';
import { ensureSchedules } from '../lib/temporal/schedules.ts';
import { createApp } from '../routes/app.ts';
import { loadStaticFiles } from '../routes/static.ts';
import { serveNode } from '../server/node_server.ts';
import { createWebDeps } from '../server/web_deps.ts';
import {
  connectWorkerToTemporal,
  createLifelineWorker,
  installTemporalRuntime,
} from '../workers/create_worker.ts';
import { createWorkerDeps } from '../workers/worker_deps.ts';
import { EMBEDDED_URL_FILE } from './cli_database.ts';
import { type DevServer, startDevServer } from './dev_server.ts';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './embedded_postgres.ts';
import { ensureTemporalCli, ROOT } from './temporal_cli.ts';

// Knobs of this script only (not of the product): where embedded state lives and the dev server's ports.
const DATA_DIR = process.env.LIFELINE_DATA_DIR ?? join(ROOT, '.data');
const TEMPORAL_PORT = Number(process.env.TEMPORAL_DEV_SERVER_PORT ?? 7233);
const TEMPORAL_UI_PORT = Number(process.env.TEMPORAL_DEV_SERVER_UI_PORT ?? 8233);

const startedAt = Date.now();
const say = (msg: string) => process.stderr.write(`[lifeline] ${msg}\n`);
const config = loadConfigOrExit(process.env);
const logger = createLogger({ level: config.logLevel, name: 'lifeline' });
// A database outage must not kill the process through a postgres.js fault (boot/driver_faults.ts).
guardKnownDriverFaults(logger);
mkdirSync(DATA_DIR, { recursive: true });

let devServer: DevServer | undefined;
let pglite: EmbeddedPostgres | undefined;
// If anything below throws, or the process dies, never leave the dev server behind.
process.on('exit', () => {
  if (devServer?.child.pid && devServer.child.exitCode === null) {
    try {
      process.kill(-devServer.child.pid, 'SIGTERM');
    } catch {}
  }
});

async function main() {
  // An external Temporal only when the environment names one (TEMPORAL_ADDRESS, TEMPORAL_PROFILE or
  // TEMPORAL_CONFIG_FILE); otherwise the embedded dev server (boot/temporal_connection.ts says why).
  let temporal = usesExternalTemporal(config)
    ? loadTemporalConnectionOrExit(config, process.env, logger)
    : undefined;
  let temporalUiUrl = config.temporal.uiUrl;
  if (temporal) {
    const { address, namespace, tls, apiKey } = temporal.connection.summary;
    say(
      `Temporal: ${address}, namespace ${namespace}, TLS ${tls}${apiKey ? ', API key' : ''} (no embedded dev server).`,
    );
  } else {
    const ignored = ignoredByEmbeddedTemporal(config);
    if (ignored.length > 0)
      say(`Ignoring ${ignored.join(', ')}: without TEMPORAL_ADDRESS the embedded dev server is used.`);
    const cli = await ensureTemporalCli(say);
    say(`Starting the Temporal dev server (state in ${DATA_DIR}/temporal.sqlite)...`);
    devServer = await startDevServer({
      cli,
      port: TEMPORAL_PORT,
      uiPort: TEMPORAL_UI_PORT,
      dbFilename: join(DATA_DIR, 'temporal.sqlite'),
      pidFile: join(DATA_DIR, 'temporal.pid'),
      log: say,
    });
    temporal = loadEmbeddedTemporalConnection(config, devServer.address, logger);
    temporalUiUrl ??= `http://127.0.0.1:${TEMPORAL_UI_PORT}`;
  }
  const temporalConfig = temporal.config;

  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    say(`Starting embedded Postgres (PGlite, data in ${DATA_DIR}/pglite)...`);
    pglite = await startEmbeddedPostgres(join(DATA_DIR, 'pglite'));
    databaseUrl = pglite.url;
    // Where the operator CLIs (export, restore, snapshot) reach this database while we run (scripts/cli_database.ts).
    writeFileSync(join(DATA_DIR, EMBEDDED_URL_FILE), `${pglite.url}\n`);
  }
  const sql = createSql({
    url: databaseUrl,
    max: pglite ? 8 : config.databasePoolSize,
    prepare: !pglite,
    applicationName: 'lifeline',
  });
  const generated = await prepareDatabase(config, databaseUrl, sql, logger);

  installTemporalRuntime(logger);
  const connection = await connectWorkerToTemporal(temporal.connection);
  // Worker and web share this process and one resolver: a refresh drops the LRU entry directly. The bus
  // still tells other instances on the same database or Redis (none with embedded PGlite: local only).
  const metrics = createMetrics({ defaults: true });
  const resolver = createConfiguredResolver(config, {
    sql,
    metrics,
    logger,
    role: 'web',
    bus: pglite ? 'local' : 'shared',
    poolSize: pglite ? 8 : config.databasePoolSize,
  });
  const worker = await createLifelineWorker({
    connection,
    namespace: temporalConfig.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    deps: createWorkerDeps(config, { sql, logger, resolver, servingStore: resolver.store }),
  });
  const workerRun = worker.run();
  await ensureSchedules(
    new Client({ connection, namespace: temporalConfig.temporal.namespace }),
    {
      taskQueue: config.temporal.taskQueue,
      rescanInterval: config.safety.rescanInterval,
      reconcileInterval: config.lifecycle.reconcileInterval,
      bitlyClicks: config.bitlyClicks,
      escrowInterval: config.escrow.interval,
      snapshotInterval: config.snapshot.interval,
    },
    logger,
  );

  const effective = {
    ...temporalConfig,
    databaseUrl,
    temporal: { ...temporalConfig.temporal, uiUrl: temporalUiUrl },
  };
  const deps = await createWebDeps(effective, {
    sql,
    logger,
    metrics,
    resolver,
    temporalConnection: temporal.connection,
  });
  const app = createApp(deps, { staticFiles: await loadStaticFiles() });
  const server = await serveNode(app.fetch, { port: config.port, host: config.host, fastPath: deps });

  const lines = [
    '',
    `Lifeline is running (started in ${((Date.now() - startedAt) / 1000).toFixed(1)} s).`,
    `  Short links:  ${config.shortBaseUrl}/<code>`,
    `  Editor UI:    ${config.appBaseUrl}/ui`,
    `  API:          ${config.appBaseUrl}/api/v1`,
    `  Temporal UI:  ${temporalUiUrl ?? '(external Temporal; see TEMPORAL_UI_URL)'}`,
    `  Database:     ${pglite ? `embedded PGlite (${DATA_DIR}/pglite)` : 'DATABASE_URL'}`,
  ];
  if (generated.adminEmail || generated.apiKey || generated.webhookSecret) {
    lines.push('', 'First run: these credentials are shown once; store them now.');
    if (generated.adminEmail)
      lines.push(`  Admin login:     ${generated.adminEmail} / ${generated.adminPassword}`);
    if (generated.apiKey) lines.push(`  Admin API key:   ${generated.apiKey}`);
    if (generated.webhookSecret) lines.push(`  Webhook secret:  ${generated.webhookSecret}`);
  }
  lines.push('', 'Press Ctrl-C to stop.', '');
  process.stderr.write(`${lines.join('\n')}\n`);

  onShutdownSignal(async () => {
    // One machine, no load balancer to wait for: readiness turns 503 and the server closes at once.
    await startDraining(deps.drain, 0, say);
    await server.close(5_000);
    say('web stopped accepting; draining the worker...');
    await deps.close();
    worker.shutdown();
    await workerRun;
    await resolver.close();
    await connection.close();
    await sql.end({ timeout: 5 });
    if (pglite) {
      rmSync(join(DATA_DIR, EMBEDDED_URL_FILE), { force: true });
      await pglite.stop();
    }
    if (devServer) await devServer.stop();
    say('stopped cleanly.');
  }, say);
  await workerRun.catch((error) => {
    logger.fatal({ err: error }, 'worker failed');
    process.exit(1);
  });
}

main().catch(async (error) => {
  say(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
  if (!(error instanceof Error && /Port \d+ is taken|No Temporal CLI/.test(error.message)))
    console.error(error);
  await pglite?.stop().catch(() => {});
  await devServer?.stop(2_000).catch(() => {});
  process.exit(1);
});
