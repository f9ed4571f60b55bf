// Worker entry (Node only: the Temporal worker needs native modules). Wiring only.

import { Client } from '@temporalio/client';
import { guardKnownDriverFaults } from '../boot/driver_faults.ts';
import { loadConfigOrExit, requireSetting } from '../boot/load_config.ts';
import { prebuilt } from '../boot/prebuilt.ts';
import { prepareDatabase, printGeneratedCredentials } from '../boot/prepare_database.ts';
import { onShutdownSignal } from '../boot/shutdown.ts';
import { loadTemporalConnectionOrExit } from '../boot/temporal_connection.ts';
import { startTracing } from '../boot/tracing.ts';
import { readDestinationOverview } from '../lib/destinations/destination_state.ts';
import { getDomainWatchSchedule } from '../lib/domains/domain_facts.ts';
import { registerDomainWatchGauges } from '../lib/domains/domain_watch_metrics.ts';
import { getDomainWatchOverview } from '../lib/domains/domain_watch_overview.ts';
import { readEscrowAges } from '../lib/escrow/escrow_age.ts';
import { getDrillGaugeValues } from '../lib/failover/scheduled_drill.ts';
import { createDrainState } from '../lib/health/drain_state.ts';
import { checkWorkerReadiness } from '../lib/health/worker_readiness.ts';
import { wakeExpirySweeper } from '../lib/links/expire_link.ts';
import { getSyncQueueOverview, kickSyncQueueIfWaiting } from '../lib/propagation/link_sync_queue.ts';
import { countWaitingBreakerHolds } from '../lib/publishing/mass_change_breaker.ts';
import { readReconcileDrift } from '../lib/reconcile/reconcile_drift.ts';
import { createConfiguredResolver } from '../lib/redirect/create_resolver.ts';
import { startRequestedRescan } from '../lib/safety/rescan_after_restore.ts';
import { storedShortDomains } from '../lib/shared/link_key.ts';
import { createLogger } from '../lib/shared/logger.ts';
import {
  createProcessMetrics,
  registerDestinationMetrics,
  registerDrillGauges,
  registerExpiryGauges,
  registerProbeIncidentGauge,
  registerSyncQueueGauges,
  registerWebhookGauges,
  registerWordPressBreakerGauge,
} from '../lib/shared/metrics.ts';
import {
  registerEscrowAgeGauges,
  registerReconcileDriftGauges,
  registerVendorCollisionGauge,
} from '../lib/shared/promise_gauges.ts';
import { getExpiryBacklog } from '../lib/stores/link_lifecycle_store.ts';
import { countOpenProbeIncidents } from '../lib/stores/probe_store.ts';
import { createSql } from '../lib/stores/sql.ts';
import { createExpirySweeper, createSyncQueueKicker } from '../lib/temporal/link_signals.ts';
import { ensureSchedules, triggerRescanNow } from '../lib/temporal/schedules.ts';
import { signalWebhookDrainer } from '../lib/temporal/webhook_signals.ts';
import { countVendorCollisions } from '../lib/vendors/count_vendor_collisions.ts';
import { readWebhookGauges, wakeWebhookDrainerIfNeeded } from '../lib/webhooks/webhook_overview.ts';
import {
  connectWorkerToTemporal,
  createLifelineWorker,
  describeWorkerStatus,
  installTemporalRuntime,
  type LifelineWorker,
} from './create_worker.ts';
import { findFreeLoopbackPort, startWorkerHealthServer } from './health_server.ts';
import { createWorkerDeps } from './worker_deps.ts';

const parsed = loadConfigOrExit(process.env);
const databaseUrl = requireSetting(
  parsed.databaseUrl,
  'DATABASE_URL',
  'for `npm run worker` (only `npm start` embeds one)',
);
const logger = createLogger({ level: parsed.logLevel, name: 'lifeline-worker' });
// Where Temporal is and how to reach it (TLS, mTLS, API key, profile file); bad settings stop here, named.
const temporal = loadTemporalConnectionOrExit(parsed, process.env, logger);
const config = temporal.config;
// A database outage must not kill the process through a postgres.js fault (boot/driver_faults.ts).
guardKnownDriverFaults(logger);
// The SDK's metrics exporter listens on loopback only; the health port below serves them with ours.
const sdkMetricsAddress = `127.0.0.1:${await findFreeLoopbackPort()}`;
installTemporalRuntime(logger, { metricsAddress: sdkMetricsAddress });
const sql = createSql({ url: databaseUrl, max: config.databasePoolSize, applicationName: 'lifeline-worker' });
const drain = createDrainState();
let worker: LifelineWorker | undefined;
let ping: () => Promise<unknown> = () => Promise.reject(new Error('not connected to Temporal yet'));
const registry = createProcessMetrics();
// The sync queue's depth and age (ADR 0024), read from Postgres at scrape time.
registerSyncQueueGauges(registry, () => getSyncQueueOverview(sql));
// Links past their expiry the sweeper has not expired yet (ADR 0091).
registerExpiryGauges(registry, () => getExpiryBacklog(sql));
// The WordPress breaker's waiting holds (ADR 0057): an alert fires while one waits for an admin.
registerWordPressBreakerGauge(registry, () => countWaitingBreakerHolds(sql));
// The promises about the copies (lib/shared/promise_gauges.ts): collisions, drift per leg, escrow and snapshot age.
registerVendorCollisionGauge(registry, () => countVendorCollisions(sql));
registerReconcileDriftGauges(registry, () => readReconcileDrift(sql, config));
registerEscrowAgeGauges(registry, () => readEscrowAges(sql, config));
// What the domain watch last read (days left, each fact), from Postgres at scrape time.
registerDomainWatchGauges(registry, () => getDomainWatchOverview(sql));
// The prober's open incidents and the failover drills' last results, read from Postgres at scrape time.
registerProbeIncidentGauge(registry, () => countOpenProbeIncidents(sql));
registerDrillGauges(registry, () => getDrillGaugeValues(sql, config));
// Destinations by verdict (the DeadDestinationsJump alert), checks by outcome, the oldest due check's age.
const destinationMetrics = registerDestinationMetrics(registry, () => readDestinationOverview(sql));
// Outgoing webhooks waiting, the oldest one's age, endpoints dead-lettering (the WebhookDeadLettering alert).
registerWebhookGauges(registry, () => readWebhookGauges(sql));
// Up before anything slow, so /livez answers (and /readyz says why not yet) while migrations and the connection run.
const health = await startWorkerHealthServer({
  host: config.workerHealth.host,
  port: config.workerHealth.port,
  registry,
  sdkMetricsAddress,
  metricsToken: config.metricsToken,
  logger,
  readiness: () =>
    checkWorkerReadiness({
      sql,
      drain,
      workerStatus: () => (worker ? describeWorkerStatus(worker) : undefined),
      pingTemporal: () => ping(),
    }),
});
logger.info(
  { port: health.port, paths: ['/livez', '/readyz', '/metrics'] },
  'worker health and metrics listening',
);
printGeneratedCredentials(await prepareDatabase(config, databaseUrl, sql, logger), config);
const connection = await connectWorkerToTemporal(temporal.connection).catch((error: Error) => {
  logger.fatal({ err: error.cause ?? error }, error.message);
  process.exit(1);
});
ping = () => connection.withDeadline(Date.now() + 1_000, () => connection.workflowService.getSystemInfo({}));
// OTEL_EXPORTER_OTLP_* unset: undefined, no OpenTelemetry SDK loaded, and the untraced workflow bundle (ADR 0072).
const tracing = await startTracing(config.tracing, { role: 'worker', logger });
// No cache here: the worker's refreshes write the serving store and announce changes to the web instances.
const resolver = createConfiguredResolver(config, { sql, logger, role: 'worker' });
worker = await createLifelineWorker({
  connection,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  deps: createWorkerDeps(config, {
    sql,
    logger,
    resolver,
    servingStore: resolver.store,
    registry,
    destinations: { countCheck: destinationMetrics.countCheck },
  }),
  // Built (dist/): the workflow bundle made at build time, with the tracing interceptors when traced; from
  // source, workflows/ is bundled now (with them when traced).
  ...(prebuilt
    ? {
        workflowBundle: {
          codePath: tracing ? prebuilt.tracedWorkflowBundlePath : prebuilt.workflowBundlePath,
        },
      }
    : {}),
  ...(tracing ? { tracing } : {}),
});
const client = new Client({
  connection,
  namespace: config.temporal.namespace,
  ...(tracing ? { interceptors: { workflow: tracing.clientInterceptors } } : {}),
});
await ensureSchedules(
  client,
  {
    taskQueue: config.temporal.taskQueue,
    rescanInterval: config.safety.rescanInterval,
    reconcileInterval: config.lifecycle.reconcileInterval,
    bitlyClicks: config.bitlyClicks,
    escrowInterval: config.escrow.interval,
    snapshotInterval: config.snapshot.interval,
    domainWatch: getDomainWatchSchedule(config),
    probeInterval: config.probe.interval,
    drill: config.drillInterval
      ? {
          interval: config.drillInterval,
          dnsTtlSeconds: config.lifecycle.dnsTtlSeconds,
          domains: storedShortDomains(config),
        }
      : undefined,
    destinationChecksEvery: config.destinationChecks.every,
    archiveQueueEvery: config.archive.mode === 'off' ? undefined : '1m',
  },
  logger,
);
// Links a restore loaded are due a safety re-scan: started now rather than at the next SAFETY_RESCAN_INTERVAL.
await startRequestedRescan({ sql, logger }, () => triggerRescanNow(client, config.temporal.taskQueue)).catch(
  (error: unknown) =>
    logger.warn(
      { err: error },
      'could not start the re-scan a restore asked for; the next start tries again',
    ),
);
// Codes queued while no kick could reach Temporal (or left when a drainer ended) are drained now.
await kickSyncQueueIfWaiting(
  { sql, queue: createSyncQueueKicker(client.workflow, config.temporal.taskQueue) },
  'worker start',
).catch((error: unknown) => logger.warn({ err: error }, 'could not wake the sync-queue drainer at start'));
// The one expiry sweeper (ADR 0091) runs from the worker's start and knows the earliest expiry in Postgres.
await wakeExpirySweeper({
  sql,
  sweeper: createExpirySweeper(client.workflow, config.temporal.taskQueue),
}).catch((error: unknown) => logger.warn({ err: error }, 'could not start the expiry sweeper at start'));
// Outgoing webhooks written while no drainer ran (the outbox is durable; ADR 0082) go out now.
await wakeWebhookDrainerIfNeeded({ sql }, (reason) =>
  signalWebhookDrainer(client.workflow, config.temporal.taskQueue, reason, config.webhooks.pollIntervalMs),
).catch((error: unknown) => logger.warn({ err: error }, 'could not wake the webhook drainer at start'));
logger.info(
  { address: temporal.connection.summary.address, taskQueue: config.temporal.taskQueue },
  'worker running',
);
const running = worker.run();

onShutdownSignal(
  async () => {
    // /readyz answers 503 (draining) from now on; /livez and /metrics keep answering until the very end.
    drain.startDraining();
    worker?.shutdown();
    await running;
    await resolver.close();
    await connection.close();
    await sql.end({ timeout: 5 });
    await health.close();
    // Last: the spans of the workflows and activities that just drained go out too.
    await tracing?.shutdown();
  },
  (msg) => logger.info(msg),
);
await running;
