// Starting the archived-copy workflow of a link (`archive:{code}`, workflows/archive_destination.ts) over any
// Temporal client: the web tier after a create or retarget, activities after an automatic retarget.
import { type WorkflowClient, WorkflowIdConflictPolicy } from '@temporalio/client';
import {
  type ArchiveDestinationInput,
  getArchiveWorkflowId,
  KindKey,
  LinkCodeKey,
  WORKFLOW_TYPES,
} from '../../workflows/contract.ts';
import type { Logger } from '../shared/logger.ts';
import type { TemporalClient } from './temporal_client.ts';

/** Starts the archived-copy workflow of a link whose destination is new (created or retargeted). */
export interface ArchiveStarter {
  archiveDestination(code: string): Promise<{ workflowId: string }>;
}

/** Starts `archive:{code}`, ending a run still busy with the link's previous destination. */
export async function startArchiveWorkflow(
  client: WorkflowClient,
  taskQueue: string,
  code: string,
): Promise<{ workflowId: string }> {
  const workflowId = getArchiveWorkflowId(code);
  await client.start(WORKFLOW_TYPES.archiveDestination, {
    taskQueue,
    workflowId,
    args: [{ code } satisfies ArchiveDestinationInput],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.TERMINATE_EXISTING,
    typedSearchAttributes: [
      { key: LinkCodeKey, value: code },
      { key: KindKey, value: 'archive' },
    ],
  });
  return { workflowId };
}

/** The web tier's starter over the process's Temporal client (bounded by the client's start deadline). */
export function createArchiveStarter(options: {
  temporal: TemporalClient;
  taskQueue: string;
  logger: Logger;
}): ArchiveStarter {
  return {
    archiveDestination: (code) =>
      options.temporal.withDeadline(5_000, () =>
        startArchiveWorkflow(options.temporal.client.workflow, options.taskQueue, code),
      ),
  };
}
