// The outgoing-webhook drainer's door (ADR 0082): signalWithStart of `webhooks:{taskQueue}`. Many kicks coalesce
// into one wake-up; a kick while no drainer runs starts one. The outbox rows are the durable part: a lost kick
// only delays them until the next kick or the drainer's next poll.
import type { WorkflowClient } from '@temporalio/client';
import {
  type DeliverWebhooksInput,
  getDrainerTaskQueue,
  getWebhookDrainerWorkflowId,
  KindKey,
  WORKFLOW_TYPES,
  webhooksDueSignal,
} from '../../workflows/contract.ts';

export async function signalWebhookDrainer(
  client: WorkflowClient,
  taskQueue: string,
  reason: string,
  pollIntervalMs: number,
): Promise<{ workflowId: string }> {
  const workflowId = getWebhookDrainerWorkflowId(taskQueue);
  await client.signalWithStart(WORKFLOW_TYPES.deliverWebhooks, {
    taskQueue: getDrainerTaskQueue(taskQueue),
    workflowId,
    args: [{ reason, pollIntervalMs } satisfies DeliverWebhooksInput],
    signal: webhooksDueSignal,
    signalArgs: [{ reason }],
    typedSearchAttributes: [{ key: KindKey, value: 'webhooks' }],
  });
  return { workflowId };
}
