import {
  Connection,
  WorkflowClient,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
} from '@temporalio/client';
import type { RescanLinksInput, rescanLinksWorkflow } from '../../workflows/rescan_links.ts';
import { ConflictError, UnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { KindKey } from './search_attributes.ts';
import { getManualRescanWorkflowId } from './workflow_ids.ts';

/** How long the web tier waits for Temporal to accept work before answering 503. */
const START_DEADLINE_MS = 5_000;

/** The web tier's door to operations workflows (re-scans; reconciliation and failover join it). */
export interface OpsGateway {
  /**
   * Starts a re-scan: `manual` is one at a time (409 while one runs); a blocklist change gets a run of its
   * own (`rescan:blocklist:{ms}`) limited to the targets it can affect.
   */
  startRescan(input: {
    trigger: 'manual' | 'blocklist';
    reason: string;
    contains?: string;
  }): Promise<{ workflowId: string }>;
  close(): Promise<void>;
}

/** A gateway over a lazily connected Temporal client (the web tier starts while Temporal is down). */
export function createOpsGateway(options: {
  address: string;
  namespace: string;
  taskQueue: string;
  logger: Logger;
}): OpsGateway {
  const connection = Connection.lazy({ address: options.address });
  const client = new WorkflowClient({ connection, namespace: options.namespace });

  async function accepted<T>(what: string, start: () => Promise<T>): Promise<T> {
    try {
      return await connection.withDeadline(Date.now() + START_DEADLINE_MS, start);
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) {
        throw new ConflictError(`${what} is already running; wait for it to finish.`);
      }
      options.logger.error({ err: error, what }, 'Temporal did not accept the work');
      throw new UnavailableError(`The work could not be durably accepted (${what}); retry later.`, 10);
    }
  }

  return {
    async startRescan(input) {
      const workflowId = getManualRescanWorkflowId(
        input.trigger === 'manual' ? 'manual' : `blocklist:${Date.now()}`,
      );
      const args: RescanLinksInput = {
        reason: input.reason,
        ...(input.contains !== undefined ? { contains: input.contains } : {}),
      };
      await accepted(workflowId, () =>
        client.start<typeof rescanLinksWorkflow>('rescanLinksWorkflow', {
          taskQueue: options.taskQueue,
          workflowId,
          args: [args],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
          typedSearchAttributes: [{ key: KindKey, value: 'rescan' }],
        }),
      );
      return { workflowId };
    },
    async close() {
      await connection.close();
    },
  };
}
