import { type WorkflowClient, WorkflowNotFoundError } from '@temporalio/client';
import {
  type ExpireLinkInput,
  type expireLinkWorkflow,
  expiryChangedSignal,
} from '../../workflows/expire_link.ts';
import { KindKey, LinkCodeKey } from './search_attributes.ts';
import { getExpireWorkflowId } from './workflow_ids.ts';

// Used from activities (Context.current().client). The sync signal is signalLinkSync in workflow_gateway.ts.

/**
 * Makes `expire:{code}` know the link's current expiry: starts it with the date (or moves its timer) when
 * the link expires; tells a running one that the expiry is gone otherwise (nothing to do if none runs).
 */
export async function signalExpiry(
  client: WorkflowClient,
  options: { taskQueue: string; code: string; expiresAtMs: number | null },
): Promise<'armed' | 'disarmed' | 'none'> {
  const workflowId = getExpireWorkflowId(options.code);
  const payload = { expiresAtMs: options.expiresAtMs };
  if (options.expiresAtMs === null) {
    try {
      await client.getHandle(workflowId).signal(expiryChangedSignal, payload);
      return 'disarmed';
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return 'none';
      throw error;
    }
  }
  await client.signalWithStart<typeof expireLinkWorkflow, [{ expiresAtMs: number | null }]>(
    'expireLinkWorkflow',
    {
      taskQueue: options.taskQueue,
      workflowId,
      args: [{ code: options.code, expiresAtMs: options.expiresAtMs } satisfies ExpireLinkInput],
      signal: expiryChangedSignal,
      signalArgs: [payload],
      typedSearchAttributes: [
        { key: LinkCodeKey, value: options.code },
        { key: KindKey, value: 'expire' },
      ],
    },
  );
  return 'armed';
}
