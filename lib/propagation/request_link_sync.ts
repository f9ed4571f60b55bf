import { getSyncWorkflowId } from '../../workflows/contract.ts';
import type { LinkSyncRequester } from '../temporal/link_sync.ts';

/**
 * Hands a changed link to its propagation workflow (`sync:{code}`, signalWithStart): the serving store, the
 * LRUs, Bitly, the CDN and the expiry sweeper follow. For workflows that changed Postgres in an activity and
 * propagate without waiting (the publish workflow's later events).
 */
export async function requestLinkSync(
  deps: { sync: LinkSyncRequester },
  input: { code: string; reason: string },
): Promise<{ workflowId: string }> {
  await deps.sync.syncLink(input.code, input.reason);
  return { workflowId: getSyncWorkflowId(input.code) };
}
