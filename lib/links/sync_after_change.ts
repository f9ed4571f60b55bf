import type { Logger } from '../logger.ts';
import type { WorkflowGateway } from '../temporal/workflow_gateway.ts';

/** Whether replicas were told about a change: `deferred` when Temporal could not take the signal. */
export type SyncState = 'accepted' | 'deferred';

/**
 * Tells the link's sync workflow that Postgres changed, after the change committed. Postgres is the truth,
 * so a Temporal outage does not undo or fail the change: it is reported as `deferred`, logged, and the
 * replicas catch up at the next reconciliation (caches also expire on their own TTL).
 */
export async function syncAfterChange(
  deps: { workflows: WorkflowGateway; logger: Logger },
  code: string,
  reason: string,
): Promise<SyncState> {
  try {
    await deps.workflows.syncLink(code, reason);
    return 'accepted';
  } catch (err) {
    deps.logger.error(
      { err, code, reason },
      'link changed but its sync could not be started; reconciliation will repair replicas',
    );
    return 'deferred';
  }
}
