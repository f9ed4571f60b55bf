import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { rescanLinksWorkflow } from '../../workflows/rescan_links.ts';
import type { Logger } from '../logger.ts';
import { KindKey } from './search_attributes.ts';
import { getRescanScheduleId } from './workflow_ids.ts';

export interface ScheduleSettings {
  taskQueue: string;
  /** SAFETY_RESCAN_INTERVAL: how often every destination is re-checked (e.g. `12h`). */
  rescanInterval: string;
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
  const scheduleId = getRescanScheduleId(settings.taskQueue);
  const spec = { intervals: [{ every: settings.rescanInterval }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'rescanLinksWorkflow',
    workflowId: scheduleId,
    taskQueue: settings.taskQueue,
    args: [{ reason: 'schedule' }] as Parameters<typeof rescanLinksWorkflow>,
    typedSearchAttributes: [{ key: KindKey, value: 'rescan' }],
  };
  // A run still going when the next is due is not doubled; one missed while Temporal was down runs once.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1h' };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies });
    logger.info({ scheduleId, every: settings.rescanInterval }, 'schedule created');
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    const handle = client.schedule.getHandle(scheduleId);
    const current = await handle.describe();
    const every = current.spec.intervals?.[0]?.every;
    const sameInterval = every !== undefined && Number(every) === msOf(settings.rescanInterval);
    if (sameInterval && current.action.taskQueue === settings.taskQueue) return;
    await handle.update((previous) => ({ ...previous, spec, action, policies }));
    logger.info({ scheduleId, every: settings.rescanInterval }, 'schedule updated');
  }
}

function msOf(duration: string): number {
  const m = /^(\d+)(m|h|d)$/.exec(duration);
  if (!m) return Number.NaN;
  return Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
}
