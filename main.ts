// Web entry (Node): parse config, build dependencies, serve. Wiring only. With WEB_CONCURRENCY > 1 this process
// is the primary: it prepares the database once and forks that many web processes of this same file, which
// share the port through SO_REUSEPORT (server/web_cluster.ts, ADR 0023).

// FIRST: reading node:async_hooks switches Node's AsyncContextFrame to its active implementation now, before any
// code runs. Left to the Temporal client (imported lazily, after the database is prepared), the switch came after
// start-up had trained process.nextTick on the inactive one, and every tick of the process then took V8's slower
// paths (ADR 0056).
import 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { guardKnownDriverFaults } from './boot/driver_faults.ts';
import { loadConfigOrExit, requireSetting } from './boot/load_config.ts';
import { prebuilt } from './boot/prebuilt.ts';
import { prepareDatabase, printGeneratedCredentials } from './boot/prepare_database.ts';
import { onShutdownSignal, startDraining } from './boot/shutdown.ts';
import { loadTemporalConnectionOrExit } from './boot/temporal_connection.ts';
import { startTracing } from './boot/tracing.ts';
import { createLogger } from './lib/shared/logger.ts';
import { createSharedLimiterHost } from './lib/shared/shared_limiter.ts';
import { createSql } from './lib/stores/sql.ts';
import { createApp } from './routes/app.ts';
import { loadStaticFiles } from './routes/static.ts';
import { serveNode } from './server/node_server.ts';
import {
  connectSharedLimiter,
  joinWebPrimary,
  reusePortUnavailable,
  startWebPrimary,
  webProcessIndex,
} from './server/web_cluster.ts';
import { createWebDeps } from './server/web_deps.ts';

const parsed = loadConfigOrExit(process.env);
const databaseUrl = requireSetting(
  parsed.databaseUrl,
  'DATABASE_URL',
  'for `npm run web` (only `npm start` embeds one)',
);
/** Set when the primary forked this process (WEB_CONCURRENCY > 1); undefined for the primary or a lone process. */
const webProcess = webProcessIndex(process.env);
const baseLogger = createLogger({ level: parsed.logLevel, name: 'lifeline-web' });
const logger = webProcess === undefined ? baseLogger : baseLogger.child({ webProcess });
// Where Temporal is and how to reach it (TLS, mTLS, API key, profile file); bad settings stop here, named.
const temporal = loadTemporalConnectionOrExit(parsed, process.env, logger);
const config = temporal.config;
// A database outage must not kill the process through a postgres.js fault (boot/driver_faults.ts).
guardKnownDriverFaults(logger);

if (config.webConcurrency > 1 && webProcess === undefined) {
  const unavailable = reusePortUnavailable();
  if (unavailable) {
    logger.error({ webConcurrency: config.webConcurrency }, unavailable);
    process.exit(1);
  }
  // Migrations, bootstrap (first-run credentials printed once) and the stored-target review: here, once.
  const sql = createSql({ url: databaseUrl, max: 2, applicationName: 'lifeline-web' });
  printGeneratedCredentials(await prepareDatabase(config, databaseUrl, sql, logger), config);
  await sql.end({ timeout: 5 });
  const primary = startWebPrimary({
    count: config.webConcurrency,
    entry: fileURLToPath(import.meta.url),
    logger,
    // Without Redis the processes share their rate-limit counters here, or each would allow the whole budget.
    ...(config.redis?.kind === 'tcp' ? {} : { limiter: createSharedLimiterHost(config) }),
  });
  let signalled = false;
  onShutdownSignal(
    async () => {
      signalled = true;
      const code = await primary.stop();
      if (code !== 0) throw new Error(`a web process exited with ${code}`);
    },
    (msg) => logger.info(msg),
  );
  primary.ready.then(
    () => logger.info({ port: config.port, processes: config.webConcurrency }, 'web listening'),
    () => {},
  );
  // One process died on its own: the others were stopped; exit non-zero for the supervisor to restart us.
  void primary.exited.then((code) => {
    if (!signalled) process.exit(code === 0 ? 1 : code);
  });
} else {
  const sql = createSql({ url: databaseUrl, max: config.databasePoolSize, applicationName: 'lifeline-web' });
  if (webProcess === undefined)
    printGeneratedCredentials(await prepareDatabase(config, databaseUrl, sql, logger), config);
  // OTEL_EXPORTER_OTLP_* unset: undefined, and no OpenTelemetry SDK is loaded (ADR 0072).
  const tracing = await startTracing(config.tracing, { role: 'web', logger });
  const deps = await createWebDeps(config, {
    sql,
    logger,
    temporalConnection: temporal.connection,
    ...(tracing ? { tracing } : {}),
    ...(webProcess !== undefined ? { sharedLimiter: connectSharedLimiter() } : {}),
  });
  const link = webProcess === undefined ? undefined : joinWebPrimary(webProcess, deps.metrics.registry);
  const app = createApp(link ? { ...deps, metricsText: link.metricsText } : deps, {
    // Built (dist/): static/ with the islands bundled at build time; from source, bundled now.
    staticFiles: await loadStaticFiles(prebuilt?.staticDir, { bundleIslands: !prebuilt }),
  });
  const server = await serveNode(app.fetch, {
    port: config.port,
    host: config.host,
    fastPath: deps,
    reusePort: link !== undefined,
  });
  link?.listening();
  logger.info(
    { port: server.port, shortBaseUrl: config.shortBaseUrl, appBaseUrl: config.appBaseUrl },
    'web listening',
  );

  onShutdownSignal(
    async () => {
      // /readyz turns 503 first; requests keep being served for SHUTDOWN_DELAY_MS, then in-flight ones finish.
      await startDraining(deps.drain, config.shutdownDelayMs, (msg) => logger.info(msg));
      await server.close();
      await deps.close();
      await sql.end({ timeout: 5 });
      // Last: the spans of the requests that just finished go out too.
      await tracing?.shutdown();
    },
    (msg) => logger.info(msg),
  );
}
