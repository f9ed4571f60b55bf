// The signals callers send to the per-post, per-link workflows (workflows/contract.ts), over any Temporal
// client: the web tier's gateway and activities (through their context's client) share these.
import { type WorkflowClient, WorkflowNotFoundError } from '@temporalio/client';
import {
  type ExpireLinkInput,
  expiryChangedSignal,
  getExpireWorkflowId,
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
import type { ExpiryTimers } from './expiry_timers.ts';
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
    taskQueue,
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

/** The durable expiry timers (`expire:{code}`) over a Temporal client. */
export function createExpiryTimers(client: WorkflowClient, taskQueue: string): ExpiryTimers {
  return {
    async set(code, expiresAtMs) {
      const workflowId = getExpireWorkflowId(code);
      const payload = { expiresAtMs };
      if (expiresAtMs === null) {
        try {
          await client.getHandle(workflowId).signal(expiryChangedSignal, payload);
          return 'disarmed';
        } catch (error) {
          if (error instanceof WorkflowNotFoundError) return 'none';
          throw error;
        }
      }
      await client.signalWithStart(WORKFLOW_TYPES.expireLink, {
        taskQueue,
        workflowId,
        args: [{ code, expiresAtMs } satisfies ExpireLinkInput],
        signal: expiryChangedSignal,
        signalArgs: [payload],
        typedSearchAttributes: [
          { key: LinkCodeKey, value: code },
          { key: KindKey, value: 'expire' },
        ],
      });
      return 'armed';
    },
    async isRunning(code) {
      try {
        const description = await client.getHandle(getExpireWorkflowId(code)).describe();
        return description.status.name === 'RUNNING';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
  };
}
