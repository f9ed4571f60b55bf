import { type PullBitlyClicksStepInput, pullBitlyClicks } from '../lib/analytics/pull_bitly_clicks.ts';
import type { ActivityDeps } from './deps.ts';
import { currentTaskContext, runStep } from './task_context.ts';

/** Analytics (lib/analytics): Bitly's per-day click counts, pulled into our store. */
export function createAnalyticsActivities(deps: ActivityDeps) {
  return {
    pullBitlyClicks: (input: PullBitlyClicksStepInput) =>
      runStep(() =>
        pullBitlyClicks(
          { sql: deps.sql, logger: deps.logger, bitly: deps.vendors?.bitly },
          input,
          currentTaskContext(),
        ),
      ),
  };
}
