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
     * Asks this worker to wake the sync queue's drainer for the changes the post's steps queued (ADR 0098) and
     * returns at once: the kick is sent within half a second, shared with this worker's other kicks of the
     * moment, and retried by the worker if it fails. The codes are in Postgres already, so a worker lost
     * before sending leaves them to the next kick (any post event, bulk change or worker start).
     */
    kickSyncQueue: async (input: { reason: string }): Promise<void> => {
      currentSignals().coalescedQueue.kickSoon(input.reason);
    },
  };
}
