import { Context } from '@temporalio/activity';
import { finishBackfill, propagateBackfill } from '../lib/publishing/backfill_run.ts';
import { decideBreakerHold } from '../lib/publishing/mass_change_breaker.ts';
import type { ReconcileStepInput } from '../lib/reconcile/reconcile_run.ts';
import { summarizeWordPressRun } from '../lib/reconcile/reconcile_run.ts';
import { reconcileWordPressPosts, reconcileWordPressSite } from '../lib/reconcile/reconcile_wordpress.ts';
import { reconcileWordPressPost } from '../lib/reconcile/reconcile_wordpress_post.ts';
import type { WordPressReconcileDeps, WordPressSiteInput } from '../lib/reconcile/wordpress_pass.ts';
import { listWordPressSites } from '../lib/reconcile/wordpress_sites.ts';
import {
  applyRetargetBatch,
  finishRetargetPlan,
  followRetargetOnBitly,
  planRetargetStep,
  setRetargetStatus,
} from '../lib/retarget/run_retarget.ts';
import type { TaskContext } from '../lib/shared/task_context.ts';
import { signalWordPressReconcile } from '../lib/temporal/adoption_signals.ts';
import type { ActivityDeps } from './deps.ts';
import {
  currentSignals,
  currentTaskContext,
  currentTaskQueue,
  runStep,
  withKeepAlive,
} from './task_context.ts';

/** Asks for a site's WordPress reconciliation through this activity's Temporal client, on the main queue. */
function currentWordPressRequester() {
  const { client } = Context.current();
  return {
    requestWordPressReconcile: (input: { site: string; reason: string }) =>
      signalWordPressReconcile(client.workflow, currentTaskQueue(), input),
  };
}

/** Adoption: backfill runs (lib/publishing) and the WordPress leg of reconciliation (lib/reconcile). */
export function createAdoptionActivities(deps: ActivityDeps) {
  const wordpressDeps = (): WordPressReconcileDeps => ({ ...deps, queue: currentSignals().queue });
  return {
    propagateBackfill: (input: { site: string; runId: string }) =>
      runStep(() =>
        propagateBackfill({ ...deps, queue: currentSignals().queue }, input, currentTaskContext()),
      ),
    finishBackfill: (input: { site: string; runId: string }) =>
      runStep(() => finishBackfill({ ...deps, wordpress: currentWordPressRequester() }, input)),
    reconcileWordPressSite: (input: WordPressSiteInput) =>
      runStep(() => reconcileWordPressSite(wordpressDeps(), input, currentTaskContext())),
    reconcileWordPressPost: (input: WordPressSiteInput & { postId: number }) =>
      runStep(() => reconcileWordPressPost(wordpressDeps(), input, currentTaskContext())),
    /** The whole site's reconciliation, for a post its plugin cannot list alone. */
    requestWordPressReconcile: (input: { site: string; reason: string }) =>
      runStep(() => currentWordPressRequester().requestWordPressReconcile(input)),
    reconcileWordPressPosts: (input: ReconcileStepInput) =>
      runStep(() => reconcileWordPressPosts(wordpressDeps(), input, currentTaskContext())),
    listWordPressSites: () => listWordPressSites(deps),
    summarizeWordPressRun: (input: { runId: string }) => summarizeWordPressRun(deps.sql, input.runId),
    /** An admin's decision on a breaker hold: applies or forgets its changes (ADR 0057). */
    decideBreakerHold: (input: { holdId: number; approve: boolean; by: string }) =>
      runStep(() => decideBreakerHold({ ...deps, queue: currentSignals().queue }, input)),
  };
}

/**
 * A retarget step heartbeats every 5 s while it runs (the workflow's heartbeat timeout is 20 s); one that reports
 * no progress for a minute is timed out and retried.
 */
const withRetargetKeepAlive = <T>(work: (context: TaskContext) => Promise<T>) =>
  withKeepAlive(5_000, work, { stallMs: 60_000 });

/** Mass retargets (lib/retarget/run_retarget.ts). */
export function createRetargetActivities(deps: ActivityDeps) {
  return {
    planRetargetStep: (input: { runId: string; cursor: string }) =>
      runStep(() => withRetargetKeepAlive((context) => planRetargetStep(deps, input, context))),
    finishRetargetPlan: (input: { runId: string }) => runStep(() => finishRetargetPlan(deps, input)),
    setRetargetStatus: (input: Parameters<typeof setRetargetStatus>[1]) =>
      runStep(() => setRetargetStatus(deps, input)),
    applyRetargetBatch: (input: { runId: string; batchSize: number; cursor?: string }) =>
      runStep(() => withRetargetKeepAlive((context) => applyRetargetBatch(deps, input, context))),
    followRetargetOnBitly: (input: { runId: string; cursor: string }) =>
      runStep(() => withRetargetKeepAlive((context) => followRetargetOnBitly(deps, input, context))),
  };
}
