// Outgoing webhooks (ADR 0082): how the drainer retries, when it gives up, how long the delivery log is kept.
import { z } from 'zod';
import { duration } from './env_values.ts';

const ms = (min: number, max: number, fallback: number) => {
  const message = `must be a whole number of milliseconds (${min} to ${max})`;
  return z.coerce.number({ message }).int(message).min(min, message).max(max, message).default(fallback);
};

const count = (min: number, max: number, fallback: number) => {
  const message = `must be a whole number (${min} to ${max})`;
  return z.coerce.number({ message }).int(message).min(min, message).max(max, message).default(fallback);
};

const DAY_MS = 86_400_000;

/** A Temporal-style duration (30m, 12h, 1d) in milliseconds. */
export function durationMs(value: string): number {
  const amount = Number(value.slice(0, -1));
  const unit = value.at(-1);
  return amount * (unit === 'd' ? DAY_MS : unit === 'h' ? 3_600_000 : 60_000);
}

export const webhooksEnv = z.object({
  // One request's deadline, connect to the last byte read.
  WEBHOOK_TIMEOUT_MS: ms(1_000, 60_000, 10_000),
  // The first retry's wait; each later one doubles it (less a fifth at most, at random) up to WEBHOOK_RETRY_MAX_MS;
  // a 429's Retry-After is honoured as asked.
  WEBHOOK_RETRY_BASE_MS: ms(50, 3_600_000, 5_000),
  WEBHOOK_RETRY_MAX_MS: ms(50, DAY_MS, 3_600_000),
  // A message still failing this long after its round began, or after this many attempts, goes dead.
  WEBHOOK_GIVE_UP_AFTER: duration.default('1d'),
  WEBHOOK_MAX_ATTEMPTS: count(1, 100, 20),
  // How often the drainer looks for new messages while an endpoint is enabled (it ends when none is).
  WEBHOOK_POLL_INTERVAL_MS: ms(100, 300_000, 5_000),
  // Requests at once across every endpoint, and messages of one endpoint per batch.
  WEBHOOK_CONCURRENCY: count(1, 64, 8),
  WEBHOOK_BATCH_PER_ENDPOINT: count(1, 500, 20),
  // The delivery log and finished messages are deleted after this long.
  WEBHOOK_LOG_RETENTION: duration.default('30d'),
  // How long a rotated secret still signs beside the new one, unless the rotation says otherwise.
  WEBHOOK_SECRET_GRACE: duration.default('1d'),
});

export interface WebhooksConfig {
  webhooks: {
    timeoutMs: number;
    retryBaseMs: number;
    retryMaxMs: number;
    giveUpAfterMs: number;
    maxAttempts: number;
    pollIntervalMs: number;
    concurrency: number;
    batchPerEndpoint: number;
    logRetentionMs: number;
    secretGraceMs: number;
  };
}

export function webhooksConfig(e: z.infer<typeof webhooksEnv>): WebhooksConfig {
  return {
    webhooks: {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
      retryMaxMs: Math.max(e.WEBHOOK_RETRY_MAX_MS, e.WEBHOOK_RETRY_BASE_MS),
      giveUpAfterMs: durationMs(e.WEBHOOK_GIVE_UP_AFTER),
      maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
      pollIntervalMs: e.WEBHOOK_POLL_INTERVAL_MS,
      concurrency: e.WEBHOOK_CONCURRENCY,
      batchPerEndpoint: e.WEBHOOK_BATCH_PER_ENDPOINT,
      logRetentionMs: durationMs(e.WEBHOOK_LOG_RETENTION),
      secretGraceMs: durationMs(e.WEBHOOK_SECRET_GRACE),
    },
  };
}
