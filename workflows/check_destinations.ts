import { continueAsNew, log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { CheckDestinationsInput, CheckDestinationsReport, DestinationCheckTotals } from './contract.ts';

const DEFAULT_CHECKS_PER_CALL = 2_000;
// A fresh history every so often keeps replay cheap however many destinations are due.
const CALLS_PER_RUN = 100;

const { checkDueDestinations } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  // The call heartbeats every 5 s while it runs, and stops once it has checked nothing for two minutes: a worker
  // lost mid-call, or a call that hangs, is noticed within this; the retry takes what is still due.
  heartbeatTimeout: '20s',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '5m' },
});
const { seedDestinationStates } = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/**
 * The destination checks of one Schedule period (`destination-checks:{taskQueue}`): every active link gets a
 * row (new ones due at once, retargeted ones reset), then every due destination is checked, a few thousand per
 * activity call, continuing as new every 100 calls. Ends when nothing is due.
 */
export async function checkDestinationsWorkflow(
  input: CheckDestinationsInput = {},
): Promise<CheckDestinationsReport> {
  const startedAtMs = input.startedAtMs ?? Date.now();
  const totals: DestinationCheckTotals = input.totals ?? {
    seeded: 0,
    checked: 0,
    skipped: 0,
    byOutcome: {},
    calls: 0,
  };
  if (input.startedAtMs === undefined) totals.seeded += (await seedDestinationStates({})).seeded;
  let more = true;
  let afterHost = input.afterHost ?? null;
  for (
    let calls = 0;
    calls < (input.callsPerRun ?? CALLS_PER_RUN) && more && !workflowInfo().continueAsNewSuggested;
    calls++
  ) {
    const page = await checkDueDestinations({
      maxChecks: input.checksPerCall ?? DEFAULT_CHECKS_PER_CALL,
      afterHost,
    });
    // Absent from a call recorded before the take went host by host: start again from the first host.
    afterHost = page.afterHost ?? null;
    totals.checked += page.counts.checked;
    totals.skipped += page.counts.skipped;
    for (const [outcome, n] of Object.entries(page.counts.byOutcome))
      totals.byOutcome[outcome as keyof typeof totals.byOutcome] =
        (totals.byOutcome[outcome as keyof typeof totals.byOutcome] ?? 0) + n;
    totals.calls++;
    more = page.more;
  }
  if (more)
    await continueAsNew<typeof checkDestinationsWorkflow>({ ...input, startedAtMs, totals, afterHost });
  const report: CheckDestinationsReport = { ...totals, durationMs: Date.now() - startedAtMs };
  log.info('destination checks finished', { ...report });
  return report;
}
