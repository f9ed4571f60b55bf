import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import { type ExpireLinkInput, type ExpireLinkResult, expiryChangedSignal, expiryQuery } from './contract.ts';

const { expireLink } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: ['BadInput'],
  },
});

/**
 * The durable timer per expiring link of before the expiry sweeper (ADR 0091), ID `expire:{code}`. No new one is
 * started; it stays registered (its code unchanged, so running executions replay) for the ones a deployment still
 * has: when they fire, Postgres has usually decided already (the sweeper expired the link, or it is not due) and
 * the activity ends them. What follows is how it worked. Sleeps until expires_at (a condition with a timeout,
 * so an `expiryChanged` signal moves the deadline without leaking timers); on fire, expireLink marks the link
 * `expired` if Postgres agrees the time has come, and the sync workflow then purges caches and updates vendors.
 * A date in the past fires at once.
 */
export async function expireLinkWorkflow(input: ExpireLinkInput): Promise<ExpireLinkResult> {
  let expiresAtMs = input.expiresAtMs;
  let changed = false;
  setHandler(expiryChangedSignal, (next) => {
    expiresAtMs = next.expiresAtMs;
    changed = true;
  });
  setHandler(expiryQuery, () => ({ expiresAtMs }));

  for (;;) {
    if (expiresAtMs === null) {
      log.info('expiry removed; timer ends', { code: input.code });
      return { outcome: 'cancelled', expiresAtMs };
    }
    changed = false;
    const woken = await condition(() => changed, Math.max(expiresAtMs - Date.now(), 1));
    if (woken) {
      // Each move adds history; a link moved very often continues as new with its current date.
      if (workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        await continueAsNew<typeof expireLinkWorkflow>({ code: input.code, expiresAtMs });
      }
      continue;
    }
    const result = await expireLink({ code: input.code });
    if (result.outcome === 'rescheduled') {
      // Postgres holds a later date than this timer knew (its signal is on the way): wait for that one.
      expiresAtMs = result.expiresAtMs;
      continue;
    }
    await condition(allHandlersFinished);
    return { outcome: result.outcome, expiresAtMs };
  }
}
