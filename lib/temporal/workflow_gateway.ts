import { Connection, WorkflowClient, WorkflowIdConflictPolicy } from '@temporalio/client';
import type { PublishPostInput, publishPostWorkflow } from '../../workflows/publish_post.ts';
import type { syncLinkWorkflow } from '../../workflows/sync_link.ts';
import { UnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { KindKey, LinkCodeKey, PostIdKey, SiteKey } from './search_attributes.ts';
import { getPublishWorkflowId, getSyncWorkflowId } from './workflow_ids.ts';

/** How long the web tier waits for Temporal to accept work before answering 503. */
const START_DEADLINE_MS = 5_000;

/** The web tier's door to Temporal: starts workflows and reports when Temporal cannot take them. */
export interface WorkflowGateway {
  /** Starts (or finds, by business key) the publish workflow of an article. */
  startPublish(input: PublishPostInput): Promise<{ workflowId: string }>;
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

  return {
    async startPublish(input) {
      const workflowId = getPublishWorkflowId(input.site, input.postId);
      await accepted(workflowId, () =>
        client.start<typeof publishPostWorkflow>('publishPostWorkflow', {
          taskQueue: options.taskQueue,
          workflowId,
          args: [input],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
          typedSearchAttributes: [
            { key: SiteKey, value: input.site },
            { key: PostIdKey, value: String(input.postId) },
            { key: KindKey, value: 'publish' },
          ],
        }),
      );
      return { workflowId };
    },
    async syncLink(code, reason) {
      const workflowId = getSyncWorkflowId(code);
      await accepted(workflowId, () =>
        client.signalWithStart<typeof syncLinkWorkflow, [{ reason: string }]>('syncLinkWorkflow', {
          taskQueue: options.taskQueue,
          workflowId,
          args: [{ code, reason }],
          signal: 'linkChanged',
          signalArgs: [{ reason }],
          typedSearchAttributes: [
            { key: LinkCodeKey, value: code },
            { key: KindKey, value: 'sync' },
          ],
        }),
      );
      return { workflowId };
    },
    async close() {
      await connection.close();
    },
  };
}
