// The outbox as the worker's gauges and its start see it (ADR 0082).
import type { WebhookGaugeValues } from '../shared/metrics.ts';
import type { Sql } from '../stores/sql.ts';
import { getWebhookQueueStats } from '../stores/webhook_store.ts';

export async function readWebhookGauges(sql: Sql): Promise<WebhookGaugeValues> {
  const stats = await getWebhookQueueStats(sql);
  return {
    pending: stats.pending,
    oldestPendingAgeSeconds: stats.oldestPendingAgeSeconds,
    deadLetteringEndpoints: stats.deadLetteringEndpoints,
  };
}

/**
 * Starts the drainer when an endpoint is enabled (the worker's start): messages written while no drainer ran,
 * or while this worker was down, are sent now rather than at the next change to an endpoint.
 */
export async function wakeWebhookDrainerIfNeeded(
  deps: { sql: Sql },
  kick: (reason: string) => Promise<unknown>,
): Promise<boolean> {
  const stats = await getWebhookQueueStats(deps.sql);
  if (stats.enabledEndpoints === 0 && stats.pending === 0) return false;
  await kick('worker start');
  return true;
}
