// The drainer's one step (activity `deliverWebhooks`, workflows/deliver_webhooks.ts, ADR 0082): take a batch of
// due messages, send each (at most WEBHOOK_CONCURRENCY at once), log every attempt and move each message to
// its next state; then say how long the workflow may sleep. Each attempt's row and state are written together,
// so a worker that dies mid-batch loses at most the attempts in flight, whose lease then runs out.
import { forEachConcurrently } from '../shared/concurrency.ts';
import type { TaskContext } from '../shared/task_context.ts';
import {
  claimDueWebhookMessages,
  getEndpointSigning,
  getWebhookQueueStats,
  pauseWebhookEndpoint,
  pruneWebhookLog,
  recordWebhookAttempt,
  updateWebhookEndpoint,
  type WebhookMessageRow,
} from '../stores/webhook_store.ts';
import { decideAfterAttempt } from './retry_policy.ts';
import { sendWebhook } from './send_webhook.ts';
import type { WebhookDeliveryDeps } from './webhook_deps.ts';
import { standardWebhookHeaders, webhookBody } from './webhook_signature.ts';

/** Messages per step: a step's attempts are bounded, and so is what a lost worker leaves leased. */
export const WEBHOOK_BATCH_LIMIT = 100;
/** Log rows (and finished messages) deleted per step past the retention. */
const PRUNE_LIMIT = 1_000;

export interface DeliverWebhooksReport {
  claimed: number;
  delivered: number;
  retrying: number;
  failed: number;
  dead: number;
  /** Whether a full batch was taken (more may be due at once). */
  more: boolean;
  enabledEndpoints: number;
  /** Milliseconds until the next pending message is due; null when none waits. */
  nextDueInMs: number | null;
}

export async function deliverWebhooks(
  deps: WebhookDeliveryDeps,
  context: TaskContext,
): Promise<DeliverWebhooksReport> {
  const { settings } = deps;
  const now = deps.now ?? (() => new Date());
  await pruneWebhookLog(deps.sql, settings.logRetentionMs, PRUNE_LIMIT);
  const messages = await claimDueWebhookMessages(deps.sql, {
    limit: WEBHOOK_BATCH_LIMIT,
    perEndpoint: settings.batchPerEndpoint,
    // Long enough for every request of the batch one after the other on one slot, plus slack.
    leaseMs: Math.ceil(WEBHOOK_BATCH_LIMIT / settings.concurrency) * (settings.timeoutMs + 1_000) + 30_000,
  });
  const counts = { delivered: 0, retrying: 0, failed: 0, dead: 0 };
  const endpoints = await getEndpointSigning(deps.sql, [...new Set(messages.map((m) => m.endpointId))]);
  const disabled = new Set<number>();
  let sent = 0;
  await forEachConcurrently(messages, settings.concurrency, async (message: WebhookMessageRow) => {
    const endpoint = endpoints.get(message.endpointId);
    if (!endpoint?.enabled || disabled.has(message.endpointId)) return;
    const body = webhookBody(message);
    const attemptAt = now();
    const headers = standardWebhookHeaders(
      endpoint.secrets,
      message.id,
      Math.floor(attemptAt.getTime() / 1000),
      body,
    );
    const attempt = await sendWebhook(deps.fetch, {
      url: endpoint.url,
      headers,
      body,
      timeoutMs: settings.timeoutMs,
    });
    const decision = decideAfterAttempt(
      attempt.result,
      { attempts: message.attempts + 1, roundStartedAt: message.roundStartedAt },
      settings,
      now(),
    );
    const statusCode = attempt.result.kind === 'answer' ? attempt.result.status : null;
    await recordWebhookAttempt(deps.sql, {
      messageId: message.id,
      outcome: decision.outcome,
      statusCode,
      latencyMs: Math.max(0, Math.round(attempt.latencyMs)),
      responseBody: attempt.responseBody,
      error: attempt.error,
      nextAttemptAt: decision.nextAttemptAt,
    });
    if (decision.pauseEndpointUntil)
      await pauseWebhookEndpoint(deps.sql, message.endpointId, decision.pauseEndpointUntil);
    if (decision.disableEndpoint && !disabled.has(message.endpointId)) {
      disabled.add(message.endpointId);
      await updateWebhookEndpoint(
        deps.sql,
        message.endpointId,
        { enabled: false },
        'the receiver answered 410 Gone',
      );
      deps.logger.warn({ endpointId: message.endpointId }, 'webhook endpoint switched off: it answered 410');
    }
    if (decision.outcome === 'dead')
      deps.logger.warn(
        { endpointId: message.endpointId, messageId: message.id, eventType: message.eventType },
        'webhook message dead-lettered',
      );
    counts[decision.outcome === 'retry' ? 'retrying' : decision.outcome]++;
    deps.countAttempt?.(decision.outcome);
    context.heartbeat({ sent: ++sent });
  });
  const stats = await getWebhookQueueStats(deps.sql);
  return {
    claimed: messages.length,
    ...counts,
    // A full batch, or messages taken while more are due now (one busy endpoint's share was taken).
    more: messages.length >= WEBHOOK_BATCH_LIMIT || (messages.length > 0 && stats.nextDueInMs === 0),
    enabledEndpoints: stats.enabledEndpoints,
    nextDueInMs: stats.nextDueInMs,
  };
}
