// Managing outgoing webhook endpoints (API /api/v1/webhooks and /ui/webhooks, admins only; ADR 0082): create,
// change, delete, rotate the secret (shown once), the delivery log, "send again". Every change is audited.
import { z } from 'zod';
import { NotFoundError, ValidationError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import type { Logger } from '../shared/logger.ts';
import { getOutgoingUrlProblem, type OutgoingRule } from '../shared/outgoing_request.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import type { Sql } from '../stores/sql.ts';
import { WEBHOOK_EVENT_TYPES } from '../stores/webhook_outbox_store.ts';

export { WEBHOOK_EVENT_TYPES };

import {
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  getWebhookMessage,
  insertWebhookEndpoint,
  listWebhookAttempts,
  listWebhookEndpoints,
  listWebhookMessages,
  redeliverWebhookMessage,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  type WebhookAttemptRow,
  type WebhookEndpointRow,
  type WebhookMessageRow,
} from '../stores/webhook_store.ts';
import { newWebhookSecret } from './webhook_signature.ts';

export interface WebhookManagementDeps {
  sql: Sql;
  logger: Logger;
  /** The outgoing-request rule (OUTGOING_ALLOWED_PRIVATE): an endpoint it refuses is refused at once. */
  outgoing: OutgoingRule;
  /** WEBHOOK_SECRET_GRACE: how long a rotated secret still signs when the rotation does not say. */
  secretGraceMs: number;
  /** Wakes the drainer (best effort: its rows are durable, and the worker's start wakes it as well). */
  kick(reason: string): Promise<unknown>;
}

const eventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1, fieldProblem('chooseEvent'))
  .transform((types) => [...new Set(types)]);

const endpointUrl = z
  .string()
  .trim()
  .max(2048, fieldProblem('maxChars', { max: 2048 }))
  .refine((v) => URL.canParse(v), fieldProblem('absoluteUrl'));

export const createWebhookInputSchema = z.strictObject({
  url: endpointUrl,
  description: z
    .string()
    .trim()
    .max(200, fieldProblem('maxChars', { max: 200 }))
    .default(''),
  eventTypes,
});
export type CreateWebhookInput = z.infer<typeof createWebhookInputSchema>;

export const updateWebhookInputSchema = z
  .strictObject({
    url: endpointUrl.optional(),
    description: z
      .string()
      .trim()
      .max(200, fieldProblem('maxChars', { max: 200 }))
      .optional(),
    eventTypes: eventTypes.optional(),
    enabled: z.boolean().optional(),
  })
  .refine((v) => Object.keys(v).length > 0, fieldProblem('nothingToChange'));
export type UpdateWebhookInput = z.infer<typeof updateWebhookInputSchema>;

export const rotateWebhookInputSchema = z.strictObject({
  graceSeconds: z
    .int()
    .min(0, fieldProblem('minNumber', { min: 0 }))
    .max(604_800, fieldProblem('maxNumber', { max: 604_800 }))
    .optional()
    .describe('how long the old secret still signs beside the new one; default WEBHOOK_SECRET_GRACE'),
});

export const webhookEndpointSchema = z.object({
  id: z.number().int(),
  url: z.string(),
  description: z.string(),
  eventTypes: z.array(z.string()),
  enabled: z.boolean(),
  disabledReason: z.string().nullable(),
  previousSecretUntil: z.string().nullable().describe('until then the previous secret signs too'),
  secretRotatedAt: z.string().nullable(),
  pausedUntil: z.string().nullable(),
  createdBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;

export const webhookSecretAnswerSchema = webhookEndpointSchema.extend({
  secret: z.string().describe('whsec_…; shown only in this answer'),
});

export const webhookAttemptSchema = z.object({
  attemptedAt: z.string(),
  outcome: z.enum(['delivered', 'retry', 'failed', 'dead']),
  statusCode: z.number().int().nullable(),
  latencyMs: z.number().int(),
  responseBody: z.string().nullable().describe('at most 1 KiB of the answer'),
  error: z.string().nullable(),
});

export const webhookDeliverySchema = z.object({
  id: z.string().describe('the webhook-id header, the same on every attempt'),
  eventType: z.string(),
  state: z.enum(['pending', 'delivered', 'failed', 'dead']),
  attempts: z.number().int(),
  nextAttemptAt: z.string().nullable(),
  lastStatus: z.number().int().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
  log: z.array(webhookAttemptSchema),
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

const iso = (d: Date | null) => d?.toISOString() ?? null;

export function toWebhookEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    previousSecretUntil: iso(row.previousSecretUntil),
    secretRotatedAt: iso(row.secretRotatedAt),
    pausedUntil: row.pausedUntil && row.pausedUntil.getTime() > Date.now() ? iso(row.pausedUntil) : null,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function toDelivery(row: WebhookMessageRow, log: WebhookAttemptRow[]): WebhookDelivery {
  return {
    id: row.id,
    eventType: row.eventType,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.state === 'pending' ? row.nextAttemptAt.toISOString() : null,
    lastStatus: row.lastStatus,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    finishedAt: iso(row.finishedAt),
    payload: row.payload,
    log: log.map((a) => ({
      attemptedAt: a.attemptedAt.toISOString(),
      outcome: a.outcome,
      statusCode: a.statusCode,
      latencyMs: a.latencyMs,
      responseBody: a.responseBody,
      error: a.error,
    })),
  };
}

/** Refuses a URL the outgoing-request rule refuses before any lookup (scheme, user-info, a private literal). */
function assertSendable(url: string, rule: OutgoingRule): void {
  const problem = getOutgoingUrlProblem(new URL(url), rule);
  if (problem)
    throw new ValidationError(
      [{ path: 'url', message: fieldProblem('outgoingRefused', { reason: problem }) }],
      'The endpoint URL is not allowed.',
    );
}

async function wake(deps: WebhookManagementDeps, reason: string): Promise<void> {
  await deps
    .kick(reason)
    .catch((error: unknown) =>
      deps.logger.warn({ err: error, reason }, 'could not wake the webhook drainer; its next start sends'),
    );
}

export async function listEndpoints(sql: Sql): Promise<WebhookEndpoint[]> {
  return (await listWebhookEndpoints(sql)).map(toWebhookEndpoint);
}

export async function getEndpoint(sql: Sql, id: number): Promise<WebhookEndpoint> {
  const row = Number.isSafeInteger(id) && id > 0 ? await getWebhookEndpoint(sql, id) : null;
  if (!row) throw new NotFoundError(`No webhook endpoint ${id}.`);
  return toWebhookEndpoint(row);
}

export async function createEndpoint(
  deps: WebhookManagementDeps,
  input: CreateWebhookInput,
  actor: string,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  assertSendable(input.url, deps.outgoing);
  const secret = newWebhookSecret();
  const row = await deps.sql.begin(async (tx) => {
    const row = await insertWebhookEndpoint(tx, { ...input, secret, createdBy: actor });
    await insertAuditEntry(tx, {
      code: null,
      actor,
      action: 'webhook.created',
      after: { id: row.id, url: row.url, eventTypes: row.eventTypes },
    });
    return row;
  });
  await wake(deps, `webhook ${row.id} created`);
  return { endpoint: toWebhookEndpoint(row), secret };
}

export async function updateEndpoint(
  deps: WebhookManagementDeps,
  id: number,
  input: UpdateWebhookInput,
  actor: string,
): Promise<WebhookEndpoint> {
  if (input.url !== undefined) assertSendable(input.url, deps.outgoing);
  const before = await getEndpoint(deps.sql, id);
  const row = await deps.sql.begin(async (tx) => {
    const row = await updateWebhookEndpoint(tx, id, input);
    if (!row) throw new NotFoundError(`No webhook endpoint ${id}.`);
    await insertAuditEntry(tx, {
      code: null,
      actor,
      action: 'webhook.updated',
      before: { id, url: before.url, eventTypes: before.eventTypes, enabled: before.enabled },
      after: { id, url: row.url, eventTypes: row.eventTypes, enabled: row.enabled },
    });
    return row;
  });
  if (row.enabled) await wake(deps, `webhook ${id} changed`);
  return toWebhookEndpoint(row);
}

export async function deleteEndpoint(deps: WebhookManagementDeps, id: number, actor: string): Promise<void> {
  const before = await getEndpoint(deps.sql, id);
  await deps.sql.begin(async (tx) => {
    if (!(await deleteWebhookEndpoint(tx, id))) throw new NotFoundError(`No webhook endpoint ${id}.`);
    await insertAuditEntry(tx, {
      code: null,
      actor,
      action: 'webhook.deleted',
      before: { id, url: before.url, eventTypes: before.eventTypes },
    });
  });
}

/** A new secret, returned this once; the old one signs beside it for the grace (0: no more from now). */
export async function rotateEndpointSecret(
  deps: WebhookManagementDeps,
  id: number,
  input: { graceSeconds?: number | undefined },
  actor: string,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  await getEndpoint(deps.sql, id);
  const secret = newWebhookSecret();
  const graceMs = input.graceSeconds !== undefined ? input.graceSeconds * 1000 : deps.secretGraceMs;
  const row = await deps.sql.begin(async (tx) => {
    const row = await rotateWebhookSecret(tx, id, secret, graceMs);
    if (!row) throw new NotFoundError(`No webhook endpoint ${id}.`);
    await insertAuditEntry(tx, {
      code: null,
      actor,
      action: 'webhook.secret_rotated',
      after: { id, previousSecretUntil: iso(row.previousSecretUntil) },
    });
    return row;
  });
  return { endpoint: toWebhookEndpoint(row), secret };
}

export const DELIVERY_STATES = ['pending', 'delivered', 'failed', 'dead'] as const;

/** An endpoint's deliveries, newest first, each with its log (newest attempt first). */
export async function listDeliveries(
  sql: Sql,
  id: number,
  options: { limit?: number; state?: (typeof DELIVERY_STATES)[number] | undefined } = {},
): Promise<WebhookDelivery[]> {
  await getEndpoint(sql, id);
  const messages = await listWebhookMessages(sql, id, {
    limit: Math.min(Math.max(options.limit ?? 50, 1), 200),
    state: options.state,
  });
  const logs = await listWebhookAttempts(
    sql,
    messages.map((m) => m.id),
  );
  return messages.map((m) => toDelivery(m, logs.get(m.id) ?? []));
}

/** "Send again": the message goes out once more under its id, with a new round of retries. */
export async function redeliver(
  deps: WebhookManagementDeps,
  id: number,
  messageId: string,
  actor: string,
): Promise<WebhookDelivery> {
  await getEndpoint(deps.sql, id);
  if (!(await redeliverWebhookMessage(deps.sql, id, messageId)))
    throw new NotFoundError(`No delivery ${messageId} of webhook endpoint ${id}.`);
  await insertAuditEntry(deps.sql, {
    code: null,
    actor,
    action: 'webhook.redelivered',
    after: { id, messageId },
  });
  await wake(deps, `delivery ${messageId} sent again`);
  const row = (await getWebhookMessage(deps.sql, messageId))!;
  return toDelivery(row, (await listWebhookAttempts(deps.sql, [messageId])).get(messageId) ?? []);
}
