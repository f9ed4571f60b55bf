import {
  type Client,
  isGrpcServiceError,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  ServiceError,
} from '@temporalio/client';
import {
  getArchiveQueueScheduleId,
  getBitlyClicksScheduleId,
  getDailyClicksWebhookScheduleId,
  getDestinationCheckScheduleId,
  getDomainWatchScheduleId,
  getDrillScheduleId,
  getEscrowScheduleId,
  getProbeScheduleId,
  getReconcileScheduleId,
  getRescanScheduleId,
  getSnapshotScheduleId,
  KindKey,
  WORKFLOW_TYPES,
} from '../../workflows/contract.ts';
import { backoffDelay } from '../shared/backoff.ts';
import type { Logger } from '../shared/logger.ts';

export interface ScheduleSettings {
  taskQueue: string;
  /** SAFETY_RESCAN_INTERVAL: how often every destination is re-checked (e.g. `12h`). */
  rescanInterval: string;
  /** RECONCILE_INTERVAL: how often Postgres, the serving store and Bitly are reconciled (e.g. `1d`). */
  reconcileInterval?: string;
  /**
   * BITLY_CLICKS_INTERVAL and BITLY_CLICKS_DAYS: how often Bitly's per-day click counts are pulled, and how many
   * days back. Absent (Bitly off, or the interval `off`): the schedule is removed if an earlier start made it.
   */
  bitlyClicks?: { interval: string; days: number } | undefined;
  /** ESCROW_INTERVAL: how often an escrow export is written; unset: no export Schedule (an old one is removed). */
  escrowInterval?: string | undefined;
  /** SNAPSHOT_INTERVAL: how often the static snapshot is regenerated; unset: none (an old one is removed). */
  snapshotInterval?: string | undefined;
  /**
   * DOMAIN_WATCH_INTERVAL and the names it reads (lib/domains/domain_facts.ts, getWatchedNames); absent (`off`,
   * or nothing to watch): the Schedule is removed if an earlier start made it.
   */
  domainWatch?: { interval: string; hosts: string[]; domains: string[] } | undefined;
  /** PROBE_INTERVAL: how often the black-box prober asks the short domain; unset (`off`): none, an old one removed. */
  probeInterval?: string | undefined;
  /**
   * DRILL_INTERVAL and FAILOVER_DNS_TTL_SECONDS: how often the failover drill runs on its own, and the TTL its
   * estimate adds; unset (`off`): none, an old one removed.
   */
  drill?:
    | {
        interval: string;
        dnsTtlSeconds: number;
        /** The short domains drilled in turn (stored names, the default '' first); absent or one: the default's. */
        domains?: string[];
      }
    | undefined;
  /**
   * DESTINATION_CHECK_EVERY: how often the due destination checks run (each link is due every
   * DESTINATION_CHECK_INTERVAL, a new one at once); unset (`off`): no Schedule (an old one is removed).
   */
  destinationChecksEvery?: string | undefined;
  /**
   * How often the drainer of archive_queue starts (ADR 0076): every minute while ARCHIVE_MODE is not off; unset:
   * no Schedule (an old one is removed).
   */
  archiveQueueEvery?: string | undefined;
}

export interface ScheduleSpec {
  scheduleId: string;
  every: string;
  workflowType: string;
  kind: string;
  args: unknown[];
}

/**
 * Registers the deployment's Temporal Schedules, idempotently: created on first start, brought in line with
 * the configuration on later starts (so changing an interval takes effect on the next deploy). Called by the
 * worker entry and `npm start`; a second worker finds them there and changes nothing.
 */
export async function ensureSchedules(
  client: Client,
  settings: ScheduleSettings,
  logger: Logger,
): Promise<void> {
  const specs: ScheduleSpec[] = [
    {
      scheduleId: getRescanScheduleId(settings.taskQueue),
      every: settings.rescanInterval,
      workflowType: WORKFLOW_TYPES.rescanLinks,
      kind: 'rescan',
      args: [{ reason: 'schedule' }],
    },
  ];
  if (settings.reconcileInterval) {
    specs.push({
      scheduleId: getReconcileScheduleId(settings.taskQueue),
      every: settings.reconcileInterval,
      workflowType: WORKFLOW_TYPES.reconcileLinks,
      kind: 'reconcile',
      args: [{ reason: 'schedule' }],
    });
  }
  if (settings.bitlyClicks) {
    specs.push({
      scheduleId: getBitlyClicksScheduleId(settings.taskQueue),
      every: settings.bitlyClicks.interval,
      workflowType: WORKFLOW_TYPES.pullBitlyClicks,
      kind: 'bitly-clicks',
      args: [{ reason: 'schedule', days: settings.bitlyClicks.days }],
    });
  } else {
    await removeSchedule(client, getBitlyClicksScheduleId(settings.taskQueue), logger);
  }
  if (settings.domainWatch) {
    const { interval, hosts, domains } = settings.domainWatch;
    specs.push({
      scheduleId: getDomainWatchScheduleId(settings.taskQueue),
      every: interval,
      workflowType: WORKFLOW_TYPES.watchDomains,
      kind: 'domain-watch',
      args: [{ reason: 'schedule', hosts, domains }],
    });
  } else {
    await removeSchedule(client, getDomainWatchScheduleId(settings.taskQueue), logger);
  }
  // Off by default: a Schedule left from an earlier configuration is removed, so "unset" really means off.
  const optional = [
    {
      scheduleId: getEscrowScheduleId(settings.taskQueue),
      every: settings.escrowInterval,
      workflowType: WORKFLOW_TYPES.escrowExport,
      kind: 'escrow',
    },
    {
      scheduleId: getSnapshotScheduleId(settings.taskQueue),
      every: settings.snapshotInterval,
      workflowType: WORKFLOW_TYPES.staticSnapshot,
      kind: 'snapshot',
    },
    {
      scheduleId: getDestinationCheckScheduleId(settings.taskQueue),
      every: settings.destinationChecksEvery,
      workflowType: WORKFLOW_TYPES.checkDestinations,
      kind: 'destination-checks',
    },
    {
      scheduleId: getArchiveQueueScheduleId(settings.taskQueue),
      every: settings.archiveQueueEvery,
      workflowType: WORKFLOW_TYPES.archiveQueue,
      kind: 'archive-queue',
    },
  ];
  for (const o of optional) {
    if (o.every) {
      specs.push({ ...o, every: o.every, args: [{ reason: 'schedule' }] });
    } else {
      await removeSchedule(client, o.scheduleId, logger);
    }
  }
  // Watching Lifeline from outside (docs/OPERATIONS.md, "The prober", "Scheduled drills"): on unless `off`.
  if (settings.probeInterval) {
    specs.push({
      scheduleId: getProbeScheduleId(settings.taskQueue),
      every: settings.probeInterval,
      workflowType: WORKFLOW_TYPES.probe,
      kind: 'probe',
      args: [{ reason: 'schedule' }],
    });
  } else {
    await removeSchedule(client, getProbeScheduleId(settings.taskQueue), logger);
  }
  if (settings.drill) {
    specs.push({
      scheduleId: getDrillScheduleId(settings.taskQueue),
      every: settings.drill.interval,
      workflowType: WORKFLOW_TYPES.scheduledDrill,
      kind: 'drill',
      // One Schedule drills every short domain in turn (workflows/scheduled_drill.ts says why); the default alone
      // keeps the arguments it always had.
      args: [
        {
          reason: 'schedule',
          dnsTtlSeconds: settings.drill.dnsTtlSeconds,
          ...((settings.drill.domains?.length ?? 0) > 1 ? { domains: settings.drill.domains } : {}),
        },
      ],
    });
  } else {
    await removeSchedule(client, getDrillScheduleId(settings.taskQueue), logger);
  }
  // Yesterday's clicks for webhook endpoints that subscribe to `clicks.daily` (nothing is written without one).
  specs.push({
    scheduleId: getDailyClicksWebhookScheduleId(settings.taskQueue),
    every: '1d',
    workflowType: WORKFLOW_TYPES.dailyClicksWebhook,
    kind: 'webhook-clicks-daily',
    args: [],
  });
  for (const spec of specs) await ensureScheduleRetrying(client, settings.taskQueue, spec, logger);
}

async function removeSchedule(client: Client, scheduleId: string, logger: Logger): Promise<void> {
  try {
    await client.schedule.getHandle(scheduleId).delete();
    logger.info({ scheduleId }, 'schedule removed (its interval is no longer set)');
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
  }
}

/** gRPC codes that a retry cannot change: the request or the credentials are wrong (status codes of gRPC). */
const PERMANENT_GRPC_CODES = new Set([3, 6, 7, 12, 16]); // INVALID_ARGUMENT, ALREADY_EXISTS, PERMISSION_DENIED, UNIMPLEMENTED, UNAUTHENTICATED
/** Retries of one schedule at start, waiting 0.5 s doubled up to 15 s: about half a minute in all. */
export const SCHEDULE_RETRIES = { retries: 6, baseMs: 500, maxMs: 15_000 };

/**
 * ensureSchedule, tried again when Temporal answered with a service error a retry can change. A Temporal that has
 * just started, or is loaded, can answer a schedule's describe with one (its scheduler workflow not yet able to
 * answer), and the worker would otherwise exit at start for it. Each attempt is the whole create-or-update, which
 * is idempotent. Other errors, and the last attempt's, are thrown as they are.
 */
export async function ensureScheduleRetrying(
  client: Client,
  taskQueue: string,
  s: ScheduleSpec,
  logger: Logger,
  retry: { retries: number; baseMs: number; maxMs: number } = SCHEDULE_RETRIES,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await ensureSchedule(client, taskQueue, s, logger);
    } catch (error) {
      const code = error instanceof ServiceError && isGrpcServiceError(error.cause) ? error.cause.code : null;
      const retryable = error instanceof ServiceError && (code === null || !PERMANENT_GRPC_CODES.has(code));
      if (!retryable || attempt >= retry.retries) throw error;
      const delayMs = backoffDelay({ attempt: attempt + 1, baseMs: retry.baseMs, maxMs: retry.maxMs });
      logger.warn(
        { scheduleId: s.scheduleId, err: error, attempt: attempt + 1, retryInMs: delayMs },
        'Temporal did not answer for a schedule; trying again',
      );
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

async function ensureSchedule(
  client: Client,
  taskQueue: string,
  s: ScheduleSpec,
  logger: Logger,
): Promise<void> {
  const spec = { intervals: [{ every: s.every }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: s.workflowType,
    workflowId: s.scheduleId,
    taskQueue,
    args: s.args,
    typedSearchAttributes: [{ key: KindKey, value: s.kind }],
  };
  // A run still going when the next is due is not doubled; one missed while Temporal was down runs once.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1h' };
  try {
    await client.schedule.create({ scheduleId: s.scheduleId, spec, action, policies });
    logger.info({ scheduleId: s.scheduleId, every: s.every }, 'schedule created');
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    const handle = client.schedule.getHandle(s.scheduleId);
    const current = await handle.describe();
    const every = current.spec.intervals?.[0]?.every;
    const sameInterval = every !== undefined && Number(every) === msOf(s.every);
    const sameArgs =
      current.action.type === 'startWorkflow' &&
      JSON.stringify(current.action.args) === JSON.stringify(s.args);
    if (sameInterval && sameArgs && current.action.taskQueue === taskQueue) return;
    await handle.update((previous) => ({ ...previous, spec, action, policies }));
    logger.info({ scheduleId: s.scheduleId, every: s.every }, 'schedule updated');
  }
}

/**
 * Runs the re-scan Schedule now (a restore asked for it: lib/safety/rescan_after_restore.ts). A run already going
 * is not doubled but followed by this one (BUFFER_ONE), so codes it has passed are scanned too.
 */
export async function triggerRescanNow(client: Client, taskQueue: string): Promise<void> {
  await client.schedule.getHandle(getRescanScheduleId(taskQueue)).trigger(ScheduleOverlapPolicy.BUFFER_ONE);
}

function msOf(duration: string): number {
  const m = /^(\d+)(m|h|d)$/.exec(duration);
  if (!m) return Number.NaN;
  return Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
}
