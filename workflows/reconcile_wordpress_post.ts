import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { ReconcileWordPressPostInput, WordPressPostReconcileReport } from './contract.ts';

const { reconcileWordPressPost } = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  // A site down for long fails the run; the post's next dead check asks again.
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 6 },
});
const { forgetReconcileRun, requestWordPressReconcile } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/**
 * One post's WordPress reconciliation, `reconcile:wordpress:{taskQueue}:{site}:post:{postId}`, started when the
 * destination checks find the article behind a WordPress-bound link dead or moved: the site's listing is asked
 * for that post only and the link repaired as WordPress says (lib/reconcile/reconcile_wordpress_post.ts). A
 * plugin that cannot list one post gets the whole site's reconciliation instead.
 */
export async function reconcileWordPressPostWorkflow(
  input: ReconcileWordPressPostInput,
): Promise<WordPressPostReconcileReport> {
  const { workflowId, runId } = workflowInfo();
  const runKey = `${workflowId}:${runId.slice(0, 8)}`;
  try {
    const result = await reconcileWordPressPost({
      runId: runKey,
      site: input.site,
      postId: input.postId,
      repair: true,
      startedAtMs: Date.now(),
    });
    if (result.wholeSite) {
      await requestWordPressReconcile({
        site: input.site,
        reason: `${input.reason}; the plugin cannot list one post`,
      });
    }
    return result;
  } finally {
    await forgetReconcileRun({ runId: runKey });
  }
}
