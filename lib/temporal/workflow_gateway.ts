import type { PostEvent, PublishPostInput } from '../../workflows/contract.ts';
import { getPublishWorkflowId, getSyncQueueWorkflowId, getSyncWorkflowId } from '../../workflows/contract.ts';
import { UnavailableError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { signalLinkSync, signalPostEvent, signalSyncQueue } from './link_signals.ts';
import type { TemporalClient } from './temporal_client.ts';
import { signalWebhookDrainer } from './webhook_signals.ts';

/** How long the web tier waits for Temporal to accept work before answering 503. */
export const START_DEADLINE_MS = 5_000;

/** The web tier's door to Temporal: starts workflows and reports when Temporal cannot take them. */
export interface WorkflowGateway {
  /** Starts (or finds, by business key) the publish workflow of an article. */
  startPublish(input: PublishPostInput): Promise<{ workflowId: string }>;
  /**
   * Hands any WordPress lifecycle event (published, updated, unpublished) to the post's one workflow,
   * `publish:{site}:{postId}` (signalWithStart): events of one post are applied one at a time, in order.
   */
  sendPostEvent(event: PostEvent): Promise<{ workflowId: string }>;
  /**
   * Tells the link's sync workflow that its Postgres row changed (signalWithStart on `sync:{code}`): caches,
   * the serving store and vendors follow. Call after the Postgres write has committed.
   */
  syncLink(code: string, reason: string): Promise<{ workflowId: string }>;
  /**
   * Wakes the sync-queue drainer (`sync-queue:{taskQueue}`, signalWithStart) after a bulk change queued its
   * codes in link_sync_queue (ADR 0024). Call after the queueing transaction committed.
   */
  kickSyncQueue(reason: string): Promise<{ workflowId: string }>;
  /**
   * Wakes the outgoing-webhook drainer (`webhooks:{taskQueue}`, signalWithStart; ADR 0082): an endpoint was
   * created or switched on, or a delivery is to be sent again.
   */
  kickWebhooks(reason: string, pollIntervalMs: number): Promise<{ workflowId: string }>;
  close(): Promise<void>;
}

/**
 * Runs `start` within the acceptance deadline; anything but success is a 503 (UnavailableError) the caller's
 * sender retries, so nothing is recorded as accepted that Temporal did not take.
 */
export async function acceptedByTemporal<T>(
  temporal: TemporalClient,
  logger: Logger,
  what: string,
  start: () => Promise<T>,
): Promise<T> {
  try {
    return await temporal.withDeadline(START_DEADLINE_MS, start);
  } catch (error) {
    logger.error({ err: error, what }, 'Temporal did not accept the work');
    throw new UnavailableError(`The work could not be durably accepted (${what}); retry later.`, 10);
  }
}

/** A gateway over the process's Temporal client (lazily connected: the web tier starts while Temporal is down). */
export function createWorkflowGateway(options: {
  temporal: TemporalClient;
  taskQueue: string;
  logger: Logger;
}): WorkflowGateway {
  const { temporal, taskQueue, logger } = options;
  const workflow = temporal.client.workflow;

  async function sendPostEvent(event: PostEvent) {
    const workflowId = getPublishWorkflowId(event.site, event.postId);
    await acceptedByTemporal(temporal, logger, workflowId, () => signalPostEvent(workflow, taskQueue, event));
    return { workflowId };
  }

  return {
    startPublish: (input) => sendPostEvent({ ...input, event: 'post.published' }),
    sendPostEvent,
    async syncLink(code, reason) {
      const workflowId = getSyncWorkflowId(code);
      await acceptedByTemporal(temporal, logger, workflowId, () =>
        signalLinkSync(workflow, taskQueue, code, reason),
      );
      return { workflowId };
    },
    async kickSyncQueue(reason) {
      const workflowId = getSyncQueueWorkflowId(taskQueue);
      await acceptedByTemporal(temporal, logger, workflowId, () =>
        signalSyncQueue(workflow, taskQueue, reason),
      );
      return { workflowId };
    },
    async kickWebhooks(reason, pollIntervalMs) {
      return acceptedByTemporal(temporal, logger, `webhooks:${taskQueue}`, () =>
        signalWebhookDrainer(workflow, taskQueue, reason, pollIntervalMs),
      );
    },
    // The connection belongs to the process (server/web_deps.ts closes it once).
    async close() {},
  };
}
