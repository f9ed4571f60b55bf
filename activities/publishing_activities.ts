import { requestLinkSync } from '../lib/propagation/request_link_sync.ts';
import type { PostEvent } from '../lib/publishing/post_event.ts';
import {
  applyPostUpdate,
  markActive,
  markGone,
  mintCode,
  remintCode,
} from '../lib/publishing/post_lifecycle.ts';
import { getPublishWorkflowId } from '../workflows/contract.ts';
import type { ActivityDeps } from './deps.ts';
import { currentSignals, runStep } from './task_context.ts';

/** The article side of the publish workflow (lib/publishing/post_lifecycle.ts); keyed by site and post id. */
export function createPublishingActivities(deps: ActivityDeps) {
  return {
    mintCode: (event: PostEvent) => runStep(() => mintCode(deps, event)),
    applyPostUpdate: (input: { event: PostEvent; code: string; queueSync?: boolean }) =>
      runStep(() => applyPostUpdate(deps, input)),
    markGone: (event: PostEvent, options?: { queueSync?: boolean }) =>
      runStep(() =>
        markGone(deps, { ...event, workflowId: getPublishWorkflowId(event.site, event.postId) }, options),
      ),
    remintCode: (input: { code: string; site: string; postId: number; reason: string }) =>
      runStep(() => remintCode(deps, input)),
    markActive: (input: { code: string; reason: string }) => runStep(() => markActive(deps, input)),
    /** Hands a changed link to its sync workflow (`sync:{code}`): serving store, caches and vendors follow. */
    requestLinkSync: (input: { code: string; reason: string }) =>
      requestLinkSync({ sync: currentSignals().sync }, input),
    /**
     * Wakes the sync queue's drainer for the changes the post's steps queued (ADR 0098); kicks of this worker's
     * other post events of the moment share one signal.
     */
    kickSyncQueue: async (input: { reason: string }): Promise<void> => {
      await currentSignals().coalescedQueue.kickSyncQueue(input.reason);
    },
  };
}
