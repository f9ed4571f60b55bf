// Web entry (Deno, e.g. Deno Deploy): the same app as main.ts, served by Deno.serve. Wiring only.

import './boot/deno_host_name.ts';
import { loadConfigOrExit, requireSetting } from './boot/load_config.ts';
import { prepareDatabase, printGeneratedCredentials } from './boot/prepare_database.ts';
import { startDraining } from './boot/shutdown.ts';
import { loadTemporalConnectionOrExit } from './boot/temporal_connection.ts';
import { createLogger } from './lib/shared/logger.ts';
import { createSql } from './lib/stores/sql.ts';
import { createApp } from './routes/app.ts';
import { loadStaticFiles } from './routes/static.ts';
import { createWebDeps } from './server/web_deps.ts';

declare const Deno: {
  env: { toObject(): Record<string, string> };
  serve(
    options: { port: number; hostname: string; onListen?: (addr: { port: number }) => void },
    handler: (request: Request) => Response | Promise<Response>,
  ): { shutdown(): Promise<void>; finished: Promise<void> };
  addSignalListener(signal: string, handler: () => void): void;
  exit(code: number): never;
};

const env = Deno.env.toObject();
const parsed = loadConfigOrExit(env);
const databaseUrl = requireSetting(parsed.databaseUrl, 'DATABASE_URL', 'for the Deno web tier');
const logger = createLogger({ level: parsed.logLevel, name: 'lifeline-web-deno' });
const temporal = loadTemporalConnectionOrExit(parsed, env, logger);
const config = temporal.config;
const sql = createSql({
  url: databaseUrl,
  max: config.databasePoolSize,
  applicationName: 'lifeline-web-deno',
});
printGeneratedCredentials(await prepareDatabase(config, databaseUrl, sql, logger), config);
if (config.tracing) {
  // boot/tracing.ts is the Node processes' (ADR 0072); Deno has its own OpenTelemetry (OTEL_DENO).
  logger.warn('OTEL_EXPORTER_OTLP_* is set, but the Deno web tier exports no spans; the Node entries do');
}
const deps = await createWebDeps(config, { sql, logger, temporalConnection: temporal.connection });
// The islands bundle is the checked-in static/islands.js: Deno Deploy cannot run esbuild (no --allow-run).
const app = createApp(deps, { staticFiles: await loadStaticFiles(undefined, { bundleIslands: false }) });
const server = Deno.serve(
  {
    port: config.port,
    hostname: config.host,
    onListen: ({ port }) => logger.info({ port, runtime: 'deno' }, 'web listening'),
  },
  app.fetch,
);

// Stop accepting, finish in-flight requests, flush buffered clicks (deps.close), close the pool, exit.
// A second signal exits at once; a failing step still exits (non-zero) rather than hang.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  Deno.addSignalListener(signal, async () => {
    if (stopping) {
      logger.warn({ signal }, 'signal again: exiting now');
      Deno.exit(130);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await startDraining(deps.drain, config.shutdownDelayMs, (msg) => logger.info(msg));
      await server.shutdown();
      await deps.close();
      await sql.end({ timeout: 5 });
      logger.info('stopped');
      Deno.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      Deno.exit(1);
    }
  });
}
