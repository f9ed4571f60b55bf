// The signals callers send to the per-post, per-link and per-deployment workflows (workflows/contract.ts), over
// any Temporal client: the web tier's gateway and activities (through their context's client) share these.
import { type WorkflowClient, WorkflowNotFoundError } from '@temporalio/client';
import {
  type ExpirySweepInput,
  expiryMovedSignal,
  getDrainerTaskQueue,
  getExpirySweepWorkflowId,
  getPublishWorkflowId,
  getSyncQueueWorkflowId,
  getSyncWorkflowId,
  KindKey,
  LinkCodeKey,
  linkChangedSignal,
  type PostEvent,
  PostIdKey,
  type PublishPostWorkflowInput,
  postEventSignal,
  SiteKey,
  type SyncLinkInput,
  type SyncQueueInput,
  syncQueuedSignal,
  WORKFLOW_TYPES,
} from '../../workflows/contract.ts';
import type { ExpirySweeper } from './expiry_sweeper.ts';
import type { LinkSyncRequester, SyncQueueKicker } from './link_sync.ts';

/** signalWithStart of `publish:{site}:{postId}` with one post event. */
export async function signalPostEvent(
  client: WorkflowClient,
  taskQueue: string,
  event: PostEvent,
): Promise<void> {
  await client.signalWithStart(WORKFLOW_TYPES.publishPost, {
    taskQueue,
    workflowId: getPublishWorkflowId(event.site, event.postId),
    args: [{ site: event.site, postId: event.postId, events: [event] } satisfies PublishPostWorkflowInput],
    signal: postEventSignal,
    signalArgs: [event],
    typedSearchAttributes: [
      { key: SiteKey, value: event.site },
      { key: PostIdKey, value: String(event.postId) },
      { key: KindKey, value: 'publish' },
    ],
  });
}

/** signalWithStart of `sync:{code}`: Postgres changed, bring every replica up to date. */
export async function signalLinkSync(
  client: WorkflowClient,
  taskQueue: string,
  code: string,
  reason: string,
): Promise<void> {
  await client.signalWithStart(WORKFLOW_TYPES.syncLink, {
    taskQueue,
    workflowId: getSyncWorkflowId(code),
    args: [{ code, reason } satisfies SyncLinkInput],
    signal: linkChangedSignal,
    signalArgs: [{ reason }],
    typedSearchAttributes: [
      { key: LinkCodeKey, value: code },
      { key: KindKey, value: 'sync' },
    ],
  });
}

/**
 * signalWithStart of the one sync-queue drainer (`sync-queue:{taskQueue}`): codes were queued in Postgres. Many
 * kicks coalesce into one wake-up; a kick while no drainer runs starts one.
 */
export async function signalSyncQueue(
  client: WorkflowClient,
  taskQueue: string,
  reason: string,
): Promise<{ workflowId: string }> {
  const workflowId = getSyncQueueWorkflowId(taskQueue);
  await client.signalWithStart(WORKFLOW_TYPES.syncQueue, {
    taskQueue: getDrainerTaskQueue(taskQueue),
    workflowId,
    args: [{ reason } satisfies SyncQueueInput],
    signal: syncQueuedSignal,
    signalArgs: [{ reason }],
    typedSearchAttributes: [{ key: KindKey, value: 'sync-queue' }],
  });
  return { workflowId };
}

/** The sync-queue kicker of code that runs where a Temporal client is at hand (activities, the worker entry). */
export function createSyncQueueKicker(client: WorkflowClient, taskQueue: string): SyncQueueKicker {
  return { kickSyncQueue: (reason) => signalSyncQueue(client, taskQueue, reason) };
}

/** The sync requester of code that runs where a Temporal client is at hand (activities). */
export function createLinkSyncRequester(client: WorkflowClient, taskQueue: string): LinkSyncRequester {
  return {
    async syncLink(code, reason) {
      await signalLinkSync(client, taskQueue, code, reason);
      return { workflowId: getSyncWorkflowId(code) };
    },
  };
}

/**
 * signalWithStart of the one expiry sweeper (`expiry-sweep:{taskQueue}`, ADR 0091) with a date a live link
 * expires at: a sweeper sleeping past it wakes by then; none running starts (and sweeps what is due at once).
 */
export async function signalExpirySweeper(
  client: WorkflowClient,
  taskQueue: string,
  expiresAtMs: number,
  reason: string,
): Promise<{ workflowId: string }> {
  const workflowId = getExpirySweepWorkflowId(taskQueue);
  await client.signalWithStart(WORKFLOW_TYPES.expirySweep, {
    taskQueue: getDrainerTaskQueue(taskQueue),
    workflowId,
    args: [{ reason } satisfies ExpirySweepInput],
    signal: expiryMovedSignal,
    signalArgs: [{ expiresAtMs }],
    typedSearchAttributes: [{ key: KindKey, value: 'expiry-sweep' }],
  });
  return { workflowId };
}

/** The expiry sweeper over a Temporal client (activities, the worker entry). */
export function createExpirySweeper(client: WorkflowClient, taskQueue: string): ExpirySweeper {
  return {
    async expiresAt(expiresAtMs) {
      await signalExpirySweeper(client, taskQueue, expiresAtMs, 'expiry set');
    },
    async isRunning() {
      try {
        const description = await client.getHandle(getExpirySweepWorkflowId(taskQueue)).describe();
        return description.status.name === 'RUNNING';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
  };
}
