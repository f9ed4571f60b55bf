import type { PostEvent } from '../lib/publishing/post_event.ts';
import {
  activatePostLink,
  applyPostUpdate,
  markPostGone,
  mintPostCode,
  remintPendingCode,
} from '../lib/publishing/post_lifecycle.ts';
import { getPublishWorkflowId, getSyncWorkflowId } from '../workflows/contract.ts';
import type { ActivityDeps } from './deps.ts';
import { currentSignals, runStep } from './task_context.ts';

/** The article side of the publish workflow (lib/publishing/post_lifecycle.ts); keyed by site and post id. */
export function createPublishingActivities(deps: ActivityDeps) {
  return {
    mintCode: (event: PostEvent) => runStep(() => mintPostCode(deps, event)),
    applyPostUpdate: (input: { event: PostEvent; code: string }) =>
      runStep(() => applyPostUpdate(deps, input)),
    markGone: (event: PostEvent) =>
      runStep(() =>
        markPostGone(deps, { ...event, workflowId: getPublishWorkflowId(event.site, event.postId) }),
      ),
    remintCode: (input: { code: string; site: string; postId: number; reason: string }) =>
      runStep(() => remintPendingCode(deps, input)),
    markActive: (input: { code: string; reason: string }) => runStep(() => activatePostLink(deps, input)),
    /** Hands a changed link to its sync workflow (`sync:{code}`): serving store, caches and vendors follow. */
    async requestLinkSync(input: { code: string; reason: string }): Promise<{ workflowId: string }> {
      await currentSignals().sync.syncLink(input.code, input.reason);
      return { workflowId: getSyncWorkflowId(input.code) };
    },
  };
}
