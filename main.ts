// Web entry (Node): parse config, build dependencies, serve. Wiring only.

import { createLogger } from './lib/logger.ts';
import { guardKnownDriverFaults } from './lib/server/driver_faults.ts';
import { loadConfigOrExit, requireSetting } from './lib/server/load_config.ts';
import { serveNode } from './lib/server/node_server.ts';
import { prepareDatabase, printGeneratedCredentials } from './lib/server/prepare_database.ts';
import { onShutdownSignal } from './lib/server/shutdown.ts';
import { createSql } from './lib/stores/sql.ts';
import { createWebDeps } from './lib/web_deps.ts';
import { createApp } from './routes/app.ts';
import { loadStaticFiles } from './routes/static.ts';

const config = loadConfigOrExit(process.env);
const databaseUrl = requireSetting(
  config.databaseUrl,
  'DATABASE_URL',
  'for `npm run web` (only `npm start` embeds one)',
);
const logger = createLogger({ level: config.logLevel, name: 'lifeline-web' });
// A database outage must not kill the process through a postgres.js fault (lib/server/driver_faults.ts).
guardKnownDriverFaults(logger);
const sql = createSql({ url: databaseUrl, max: config.databasePoolSize, applicationName: 'lifeline-web' });
printGeneratedCredentials(await prepareDatabase(config, databaseUrl, sql, logger));
const deps = await createWebDeps(config, { sql, logger });
const app = createApp(deps, { staticFiles: await loadStaticFiles() });
const server = await serveNode(app.fetch, { port: config.port, host: config.host, fastPath: deps });
logger.info(
  { port: server.port, shortBaseUrl: config.shortBaseUrl, appBaseUrl: config.appBaseUrl },
  'web listening',
);

onShutdownSignal(
  async () => {
    await server.close();
    await deps.close();
    await sql.end({ timeout: 5 });
  },
  (msg) => logger.info(msg),
);
