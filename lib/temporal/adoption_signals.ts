// Signals of the adoption workflows (backfill runs, WordPress reconciliation, mass retargets) over any Temporal
// client: the web tier's gateway and activities (through their context's client) share these.
import { type WorkflowClient, WorkflowIdConflictPolicy } from '@temporalio/client';
import {
  type BackfillPostsInput,
  backfillBatchSignal,
  getBackfillWorkflowId,
  getWordPressPostReconcileWorkflowId,
  getWordPressReconcileWorkflowId,
  KindKey,
  LinkCodeKey,
  PostIdKey,
  type ReconcileWordPressInput,
  type ReconcileWordPressPostInput,
  SiteKey,
  WORKFLOW_TYPES,
  wordpressBreakerDecisionSignal,
  wordpressChangedSignal,
} from '../../workflows/contract.ts';

/** signalWithStart of `backfill:{site}:{run}`: a batch of the run is in Postgres. */
export async function signalBackfillBatch(
  client: WorkflowClient,
  taskQueue: string,
  input: { site: string; runId: string; batch: number; final: boolean },
): Promise<{ workflowId: string }> {
  const workflowId = getBackfillWorkflowId(input.site, input.runId);
  await client.signalWithStart(WORKFLOW_TYPES.backfillPosts, {
    taskQueue,
    workflowId,
    args: [{ site: input.site, runId: input.runId } satisfies BackfillPostsInput],
    signal: backfillBatchSignal,
    signalArgs: [{ batch: input.batch, final: input.final }],
    typedSearchAttributes: [
      { key: SiteKey, value: input.site },
      { key: KindKey, value: 'backfill' },
    ],
  });
  return { workflowId };
}

/**
 * signalWithStart of the site's WordPress reconciliation: starts it, or (while one runs) makes it run once more
 * when it ends, so a change that arrives mid-pass is never missed.
 */
export async function signalWordPressReconcile(
  client: WorkflowClient,
  taskQueue: string,
  input: { site: string; reason: string },
): Promise<{ workflowId: string }> {
  const workflowId = getWordPressReconcileWorkflowId(taskQueue, input.site);
  await client.signalWithStart(WORKFLOW_TYPES.reconcileWordPress, {
    taskQueue,
    workflowId,
    args: [{ site: input.site, reason: input.reason } satisfies ReconcileWordPressInput],
    signal: wordpressChangedSignal,
    signalArgs: [{ reason: input.reason }],
    typedSearchAttributes: [
      { key: SiteKey, value: input.site },
      { key: KindKey, value: 'reconcile' },
    ],
  });
  return { workflowId };
}

/**
 * signalWithStart of the site's WordPress reconciliation with an admin's decision on a breaker hold: the pass
 * waiting on it applies or discards it; a hold of post events is decided before the next pass (which a start
 * makes).
 */
export async function signalWordPressBreakerDecision(
  client: WorkflowClient,
  taskQueue: string,
  input: { site: string; holdId: number; approve: boolean; by: string },
): Promise<{ workflowId: string }> {
  const workflowId = getWordPressReconcileWorkflowId(taskQueue, input.site);
  const reason = `breaker hold ${input.holdId} ${input.approve ? 'approved' : 'discarded'}`;
  await client.signalWithStart(WORKFLOW_TYPES.reconcileWordPress, {
    taskQueue,
    workflowId,
    args: [{ site: input.site, reason } satisfies ReconcileWordPressInput],
    signal: wordpressBreakerDecisionSignal,
    signalArgs: [{ holdId: input.holdId, approve: input.approve, by: input.by }],
    typedSearchAttributes: [
      { key: SiteKey, value: input.site },
      { key: KindKey, value: 'reconcile' },
    ],
  });
  return { workflowId };
}

/**
 * Starts one post's WordPress reconciliation (a check found its article dead or moved); while one runs for the
 * post, it covers this request too.
 */
export async function startWordPressPostReconcile(
  client: WorkflowClient,
  taskQueue: string,
  input: ReconcileWordPressPostInput & { code: string },
): Promise<{ workflowId: string }> {
  const workflowId = getWordPressPostReconcileWorkflowId(taskQueue, input.site, input.postId);
  await client.start(WORKFLOW_TYPES.reconcileWordPressPost, {
    taskQueue,
    workflowId,
    args: [
      { site: input.site, postId: input.postId, reason: input.reason } satisfies ReconcileWordPressPostInput,
    ],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    typedSearchAttributes: [
      { key: SiteKey, value: input.site },
      { key: KindKey, value: 'reconcile' },
      { key: PostIdKey, value: String(input.postId) },
      { key: LinkCodeKey, value: input.code },
    ],
  });
  return { workflowId };
}
