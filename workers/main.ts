// Worker entry (Node only: the Temporal worker needs native modules). Wiring only.

import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { guardKnownDriverFaults } from '../boot/driver_faults.ts';
import { loadConfigOrExit, requireSetting } from '../boot/load_config.ts';
import { prepareDatabase, printGeneratedCredentials } from '../boot/prepare_database.ts';
import { onShutdownSignal } from '../boot/shutdown.ts';
import { createConfiguredResolver } from '../lib/redirect/create_resolver.ts';
import { createLogger } from '../lib/shared/logger.ts';
import { createSql } from '../lib/stores/sql.ts';
import { ensureSchedules } from '../lib/temporal/schedules.ts';
import { createLifelineWorker, installTemporalRuntime } from './create_worker.ts';
import { createWorkerDeps } from './worker_deps.ts';

const config = loadConfigOrExit(process.env);
const databaseUrl = requireSetting(
  config.databaseUrl,
  'DATABASE_URL',
  'for `npm run worker` (only `npm start` embeds one)',
);
const logger = createLogger({ level: config.logLevel, name: 'lifeline-worker' });
// A database outage must not kill the process through a postgres.js fault (boot/driver_faults.ts).
guardKnownDriverFaults(logger);
installTemporalRuntime(logger);
const sql = createSql({ url: databaseUrl, max: config.databasePoolSize, applicationName: 'lifeline-worker' });
printGeneratedCredentials(await prepareDatabase(config, databaseUrl, sql, logger));
const address = config.temporal.address ?? '127.0.0.1:7233';
const connection = await NativeConnection.connect({ address });
// No cache here: the worker's refreshes write the serving store and announce changes to the web instances.
const resolver = createConfiguredResolver(config, { sql, logger, role: 'worker' });
const worker = await createLifelineWorker({
  connection,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  deps: createWorkerDeps(config, { sql, logger, resolver, servingStore: resolver.store }),
});
await ensureSchedules(
  new Client({ connection, namespace: config.temporal.namespace }),
  {
    taskQueue: config.temporal.taskQueue,
    rescanInterval: config.safety.rescanInterval,
    reconcileInterval: config.lifecycle.reconcileInterval,
    escrowInterval: config.escrow.interval,
    snapshotInterval: config.snapshot.interval,
  },
  logger,
);
logger.info({ address, taskQueue: config.temporal.taskQueue }, 'worker running');
const running = worker.run();

onShutdownSignal(
  async () => {
    worker.shutdown();
    await running;
    await resolver.close();
    await connection.close();
    await sql.end({ timeout: 5 });
  },
  (msg) => logger.info(msg),
);
await running;
