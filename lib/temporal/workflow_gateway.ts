import { Connection, WorkflowClient } from '@temporalio/client';
import type { PublishPostInput, publishPostWorkflow } from '../../workflows/publish_post.ts';
import type { syncLinkWorkflow } from '../../workflows/sync_link.ts';
import type { PostEvent } from '../publishing/post_event.ts';
import { UnavailableError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { KindKey, LinkCodeKey, PostIdKey, SiteKey } from './search_attributes.ts';
import { getPublishWorkflowId, getSyncWorkflowId } from './workflow_ids.ts';

/** How long the web tier waits for Temporal to accept work before answering 503. */
const START_DEADLINE_MS = 5_000;

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
  close(): Promise<void>;
}

/** A gateway over a lazily connected Temporal client: the web tier starts even while Temporal is down. */
export function createWorkflowGateway(options: {
  address: string;
  namespace: string;
  taskQueue: string;
  logger: Logger;
}): WorkflowGateway {
  const connection = Connection.lazy({ address: options.address });
  const client = new WorkflowClient({ connection, namespace: options.namespace });

  async function accepted<T>(what: string, start: () => Promise<T>): Promise<T> {
    try {
      return await connection.withDeadline(Date.now() + START_DEADLINE_MS, start);
    } catch (error) {
      options.logger.error({ err: error, what }, 'Temporal did not accept the work');
      throw new UnavailableError(`The work could not be durably accepted (${what}); retry later.`, 10);
    }
  }

  async function sendPostEvent(event: PostEvent) {
    const workflowId = getPublishWorkflowId(event.site, event.postId);
    await accepted(workflowId, () => signalPostEvent(client, options.taskQueue, event));
    return { workflowId };
  }

  return {
    startPublish: (input) => sendPostEvent({ ...input, event: 'post.published' }),
    sendPostEvent,
    async syncLink(code, reason) {
      const workflowId = getSyncWorkflowId(code);
      await accepted(workflowId, () => signalLinkSync(client, options.taskQueue, code, reason));
      return { workflowId };
    },
    async close() {
      await connection.close();
    },
  };
}

/** signalWithStart of `publish:{site}:{postId}` with one post event (the gateway and tests share it). */
export async function signalPostEvent(
  client: WorkflowClient,
  taskQueue: string,
  event: PostEvent,
): Promise<void> {
  await client.signalWithStart<typeof publishPostWorkflow, [PostEvent]>('publishPostWorkflow', {
    taskQueue,
    workflowId: getPublishWorkflowId(event.site, event.postId),
    args: [{ site: event.site, postId: event.postId, events: [event] }],
    signal: 'postEvent',
    signalArgs: [event],
    typedSearchAttributes: [
      { key: SiteKey, value: event.site },
      { key: PostIdKey, value: String(event.postId) },
      { key: KindKey, value: 'publish' },
    ],
  });
}

/** signalWithStart of `sync:{code}`: the gateway and the requestLinkSync activity share it. */
export async function signalLinkSync(
  client: WorkflowClient,
  taskQueue: string,
  code: string,
  reason: string,
): Promise<void> {
  await client.signalWithStart<typeof syncLinkWorkflow, [{ reason: string }]>('syncLinkWorkflow', {
    taskQueue,
    workflowId: getSyncWorkflowId(code),
    args: [{ code, reason }],
    signal: 'linkChanged',
    signalArgs: [{ reason }],
    typedSearchAttributes: [
      { key: LinkCodeKey, value: code },
      { key: KindKey, value: 'sync' },
    ],
  });
}
