import { ApplicationFailure, executeChild, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { changeFrontWorkflow } from './change_front.ts';
import type { ChangeFrontReport, ScheduledDrillInput, ScheduledDrillReport } from './contract.ts';

const { reserveScheduledDrill } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 },
});

type DomainDrill = Omit<ScheduledDrillReport, 'domains'> & { domain: string };

/**
 * The failover drill on a schedule (`drill-schedule:{taskQueue}`, every DRILL_INTERVAL): the drill an admin
 * starts from the operations page (changeFrontWorkflow, towards in-house: preflight reconciliation, every active
 * code verified, the estimate), reserved the same way, so it never runs beside another front change (then it is
 * skipped). Each short domain (`input.domains`, SHORT_DOMAINS) is drilled in turn, one after another in one run:
 * front changes go one at a time, so domains drilled by Schedules of their own would skip each other. Each drill's
 * report is its ops_runs row; a failed drill fails this run too, after the other domains had theirs.
 */
export async function scheduledDrillWorkflow(input: ScheduledDrillInput): Promise<ScheduledDrillReport> {
  const domains = input.domains && input.domains.length > 0 ? input.domains : [''];
  const time = new Date().toISOString();
  const results: DomainDrill[] = [];
  for (const domain of domains) results.push({ domain, ...(await drillOne(input, domain, time)) });
  const first = results[0]!;
  const { domain: _first, ...head } = first;
  const failed = results.filter((r) => r.outcome === 'failed');
  if (failed.length > 0) {
    const why = failed.map((r) => r.error).join('; ');
    throw ApplicationFailure.nonRetryable(why, 'DrillFailed');
  }
  return domains.length > 1 ? { ...head, domains: results } : head;
}

/** One domain's drill: `drill:inhouse:scheduled:{time}` for the default, `drill:inhouse:{domain}:scheduled:{time}`. */
async function drillOne(
  input: ScheduledDrillInput,
  domain: string,
  time: string,
): Promise<Omit<ScheduledDrillReport, 'domains'>> {
  const workflowId =
    domain === '' ? `drill:inhouse:scheduled:${time}` : `drill:inhouse:${domain}:scheduled:${time}`;
  const reservation = await reserveScheduledDrill({
    workflowId,
    to: 'inhouse',
    ...(domain === '' ? {} : { domain }),
  });
  if (!reservation.reserved) return { workflowId: null, outcome: 'skipped', running: reservation.running };
  let report: ChangeFrontReport;
  try {
    report = await executeChild<typeof changeFrontWorkflow>('changeFrontWorkflow', {
      workflowId,
      args: [
        {
          to: 'inhouse',
          ...(domain === '' ? {} : { domain }),
          drill: true,
          requestedBy: 'schedule',
          dnsTtlSeconds: input.dnsTtlSeconds,
          ...(input.verifyPerCall ? { verifyPerCall: input.verifyPerCall } : {}),
        },
      ],
    });
  } catch (error) {
    // The child's own failure (its cause) says why; the drill's ops_runs row has the whole report.
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const why = cause instanceof Error ? cause.message : String(cause);
    return { workflowId, outcome: 'failed', error: `the scheduled drill ${workflowId} failed: ${why}` };
  }
  return { workflowId, outcome: 'passed', report };
}
