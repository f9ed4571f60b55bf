// Web entry (Node): parse config, build dependencies, serve. Wiring only.

import { guardKnownDriverFaults } from './boot/driver_faults.ts';
import { loadConfigOrExit, requireSetting } from './boot/load_config.ts';
import { prepareDatabase, printGeneratedCredentials } from './boot/prepare_database.ts';
import { onShutdownSignal, startDraining } from './boot/shutdown.ts';
import { loadTemporalConnectionOrExit } from './boot/temporal_connection.ts';
import { createLogger } from './lib/shared/logger.ts';
import { createSql } from './lib/stores/sql.ts';
import { createApp } from './routes/app.ts';
import { loadStaticFiles } from './routes/static.ts';
import { serveNode } from './server/node_server.ts';
import { createWebDeps } from './server/web_deps.ts';

const parsed = loadConfigOrExit(process.env);
const databaseUrl = requireSetting(
  parsed.databaseUrl,
  'DATABASE_URL',
  'for `npm run web` (only `npm start` embeds one)',
);
const logger = createLogger({ level: parsed.logLevel, name: 'lifeline-web' });
// Where Temporal is and how to reach it (TLS, mTLS, API key, profile file); bad settings stop here, named.
const temporal = loadTemporalConnectionOrExit(parsed, process.env, logger);
const config = temporal.config;
// A database outage must not kill the process through a postgres.js fault (boot/driver_faults.ts).
guardKnownDriverFaults(logger);
const sql = createSql({ url: databaseUrl, max: config.databasePoolSize, applicationName: 'lifeline-web' });
printGeneratedCredentials(await prepareDatabase(config, databaseUrl, sql, logger));
const deps = await createWebDeps(config, { sql, logger, temporalConnection: temporal.connection });
const app = createApp(deps, { staticFiles: await loadStaticFiles() });
const server = await serveNode(app.fetch, { port: config.port, host: config.host, fastPath: deps });
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
  },
  (msg) => logger.info(msg),
);
