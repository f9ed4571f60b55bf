import { continueAsNew, log, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { PullBitlyClicksInput, PullBitlyClicksReport, PullBitlyClicksTotals } from './contract.ts';

const DEFAULT_DAYS = 30;
const DEFAULT_LINKS_PER_CALL = 1_000;
// A fresh history every so often keeps replay cheap however many links and rate-limit waits there are.
const CALLS_PER_RUN = 100;

const { pullBitlyClicks } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  // A worker that dies mid-call is noticed within this; its successor resumes from the last heartbeat.
  heartbeatTimeout: '30s',
  retry: {
    initialInterval: '5s',
    backoffCoefficient: 2,
    maximumInterval: '5m',
    nonRetryableErrorTypes: ['BadInput'],
  },
});

function emptyTotals(): PullBitlyClicksTotals {
  return { links: 0, days: 0, missing: 0, failed: 0, calls: 0, waits: 0, waitedMs: 0 };
}

/**
 * Pulls Bitly's clicks per day for every active link Bitly holds into vendor_daily_clicks, in activity calls of
 * up to a thousand links that heartbeat their cursor. When Bitly rate-limits, the call returns early and the
 * run waits on a durable timer (visible in its history) before going on from the same link; it continues as new
 * every 100 calls. Started by the Schedule `bitly-clicks:{taskQueue}` every BITLY_CLICKS_INTERVAL (or by hand:
 * `temporal schedule trigger --schedule-id bitly-clicks:{taskQueue}`).
 */
export async function pullBitlyClicksWorkflow(
  input: PullBitlyClicksInput = {},
): Promise<PullBitlyClicksReport> {
  const { workflowId } = workflowInfo();
  const startedAtMs = input.startedAtMs ?? Date.now();
  const totals = input.totals ?? emptyTotals();
  let cursor = input.cursor ?? '';
  let done = false;
  let stopped: string | undefined;
  for (
    let calls = 0;
    calls < (input.callsPerRun ?? CALLS_PER_RUN) && !done && !workflowInfo().continueAsNewSuggested;
    calls++
  ) {
    const step = await pullBitlyClicks({
      runId: workflowId,
      cursor,
      days: input.days ?? DEFAULT_DAYS,
      maxLinks: input.linksPerCall ?? DEFAULT_LINKS_PER_CALL,
    });
    totals.calls++;
    totals.links += step.counts.links;
    totals.days += step.counts.days;
    totals.missing += step.counts.missing;
    totals.failed += step.counts.failed;
    cursor = step.cursor;
    done = step.done;
    stopped = step.stopped;
    if (step.waitMs !== undefined) {
      totals.waits++;
      totals.waitedMs += step.waitMs;
      log.info('Bitly rate-limited the clicks pull; waiting', { cursor, waitMs: step.waitMs });
      await sleep(step.waitMs);
    }
  }
  if (!done) await continueAsNew<typeof pullBitlyClicksWorkflow>({ ...input, startedAtMs, cursor, totals });
  const report: PullBitlyClicksReport = {
    ...totals,
    ...(stopped ? { stopped } : {}),
    durationMs: Date.now() - startedAtMs,
  };
  log.info('Bitly clicks pull finished', { ...report, reason: input.reason ?? 'schedule' });
  return report;
}
