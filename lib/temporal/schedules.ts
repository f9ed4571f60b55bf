import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import {
  getReconcileScheduleId,
  getRescanScheduleId,
  KindKey,
  WORKFLOW_TYPES,
} from '../../workflows/contract.ts';
import type { Logger } from '../shared/logger.ts';

export interface ScheduleSettings {
  taskQueue: string;
  /** SAFETY_RESCAN_INTERVAL: how often every destination is re-checked (e.g. `12h`). */
  rescanInterval: string;
  /** RECONCILE_INTERVAL: how often Postgres, the serving store and Bitly are reconciled (e.g. `1d`). */
  reconcileInterval?: string;
}

interface ScheduleSpec {
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
  for (const spec of specs) await ensureSchedule(client, settings.taskQueue, spec, logger);
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
    if (sameInterval && current.action.taskQueue === taskQueue) return;
    await handle.update((previous) => ({ ...previous, spec, action, policies }));
    logger.info({ scheduleId: s.scheduleId, every: s.every }, 'schedule updated');
  }
}

function msOf(duration: string): number {
  const m = /^(\d+)(m|h|d)$/.exec(duration);
  if (!m) return Number.NaN;
  return Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
}
