import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { createOutgoingFetch, type OutgoingRule } from '../shared/outgoing_request.ts';
import type { Sql } from '../stores/sql.ts';
import type { RetrySettings } from './retry_policy.ts';

/** What the drainer's activity needs: the pool, the rule-bound fetch, the settings, a counter per outcome. */
export interface WebhookDeliveryDeps {
  sql: Sql;
  logger: Logger;
  /** A fetch under the outgoing-request rule (createOutgoingFetch); tests pass the same with their allowance. */
  fetch: typeof fetch;
  settings: RetrySettings & {
    timeoutMs: number;
    concurrency: number;
    batchPerEndpoint: number;
    logRetentionMs: number;
  };
  /** Counts each attempt by outcome (lifeline_webhook_deliveries_total); absent: not counted. */
  countAttempt?: (outcome: string) => void;
  now?: () => Date;
}

/** The drainer's dependencies from configuration (the worker's composition and the tests' harness). */
export function createWebhookDeliveryDeps(
  config: Pick<Config, 'webhooks' | 'outgoing'>,
  base: { sql: Sql; logger: Logger; countAttempt?: (outcome: string) => void; outgoing?: OutgoingRule },
): WebhookDeliveryDeps {
  return {
    sql: base.sql,
    logger: base.logger,
    fetch: createOutgoingFetch(base.outgoing ?? config.outgoing),
    settings: config.webhooks,
    ...(base.countAttempt ? { countAttempt: base.countAttempt } : {}),
  };
}
