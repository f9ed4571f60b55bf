// main.ts without the Node fast path: every request, redirects included, goes through the Hono app on
// @hono/node-server. bench/redirect/run.ts measures it beside main.ts in the LRU-hit path, to show what the
// fast path is worth (DESIGN.md: "if Hono's adapter costs more than that, route the hot path around it").

// First, as in main.ts (ADR 0056): Node's async context frame switched on before anything runs.
import 'node:async_hooks';
import { loadConfigOrExit, requireSetting } from '../../boot/load_config.ts';
import { prepareDatabase } from '../../boot/prepare_database.ts';
import { onShutdownSignal } from '../../boot/shutdown.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createSql } from '../../lib/stores/sql.ts';
import { createApp } from '../../routes/app.ts';
import { loadStaticFiles } from '../../routes/static.ts';
import { serveNode } from '../../server/node_server.ts';
import { createWebDeps } from '../../server/web_deps.ts';

const config = loadConfigOrExit(process.env);
const databaseUrl = requireSetting(config.databaseUrl, 'DATABASE_URL', 'for the bench');
const logger = createLogger({ level: config.logLevel, name: 'bench-hono-only' });
const sql = createSql({ url: databaseUrl, max: config.databasePoolSize, applicationName: 'bench-hono-only' });
await prepareDatabase(config, databaseUrl, sql, logger);
const deps = await createWebDeps(config, { sql, logger });
const app = createApp(deps, { staticFiles: await loadStaticFiles() });
const server = await serveNode(app.fetch, { port: config.port, host: config.host });
onShutdownSignal(
  async () => {
    await server.close(1_000);
    await deps.close();
    await sql.end({ timeout: 1 });
  },
  () => {},
);
