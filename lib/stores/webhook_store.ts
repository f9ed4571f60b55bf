// Outgoing webhooks' endpoints, messages and delivery log (migrations/0110_outgoing_webhooks.sql, ADR 0082). The
// outbox writer the rest of lib calls is webhook_outbox_store.ts; this file is the management and the drainer's.
import type { Db, Sql } from './sql.ts';

/** An endpoint as management shows it: never its secrets. */
export interface WebhookEndpointRow {
  id: number;
  url: string;
  description: string;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  /** Until when the previous secret still signs; null when only the current one does. */
  previousSecretUntil: Date | null;
  secretRotatedAt: Date | null;
  pausedUntil: Date | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

/** The secrets that sign a message now: the current one, and the previous one during a rotation's grace. */
export interface EndpointSigning {
  id: number;
  url: string;
  enabled: boolean;
  secrets: string[];
}

export type WebhookMessageState = 'pending' | 'delivered' | 'failed' | 'dead';
export type WebhookAttemptOutcome = 'delivered' | 'retry' | 'failed' | 'dead';

export interface WebhookMessageRow {
  id: string;
  endpointId: number;
  eventType: string;
  payload: Record<string, unknown>;
  state: WebhookMessageState;
  attempts: number;
  roundStartedAt: Date;
  nextAttemptAt: Date;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface WebhookAttemptRow {
  id: number;
  messageId: string;
  attemptedAt: Date;
  outcome: WebhookAttemptOutcome;
  statusCode: number | null;
  latencyMs: number;
  responseBody: string | null;
  error: string | null;
}

const ENDPOINT_COLUMNS = `id::int AS id, url, description, event_types AS "eventTypes", enabled,
  disabled_reason AS "disabledReason",
  CASE WHEN previous_secret_until > now() THEN previous_secret_until END AS "previousSecretUntil",
  secret_rotated_at AS "secretRotatedAt", paused_until AS "pausedUntil", created_by AS "createdBy",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const messageColumns = (
  m = '',
) => `${m}id, ${m}endpoint_id::int AS "endpointId", ${m}event_type AS "eventType", ${m}payload, ${m}state,
  ${m}attempts, ${m}round_started_at AS "roundStartedAt", ${m}next_attempt_at AS "nextAttemptAt",
  ${m}last_status AS "lastStatus", ${m}last_error AS "lastError", ${m}created_at AS "createdAt",
  ${m}finished_at AS "finishedAt"`;
const MESSAGE_COLUMNS = messageColumns();

export async function insertWebhookEndpoint(
  db: Db,
  values: { url: string; description: string; eventTypes: string[]; secret: string; createdBy: string },
): Promise<WebhookEndpointRow> {
  const [row] = await db<WebhookEndpointRow[]>`
    INSERT INTO webhook_endpoints (url, description, event_types, secret, created_by)
    VALUES (${values.url}, ${values.description}, ${db.array(values.eventTypes)}::text[], ${values.secret},
            ${values.createdBy})
    RETURNING ${db.unsafe(ENDPOINT_COLUMNS)}`;
  return row!;
}

export async function listWebhookEndpoints(db: Db): Promise<WebhookEndpointRow[]> {
  return db.unsafe<WebhookEndpointRow[]>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY id`);
}

export async function getWebhookEndpoint(db: Db, id: number): Promise<WebhookEndpointRow | null> {
  const [row] = await db.unsafe<WebhookEndpointRow[]>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`,
    [id],
  );
  return row ?? null;
}

/** Changes what is given; switching an endpoint on again clears why Lifeline had switched it off. */
export async function updateWebhookEndpoint(
  db: Db,
  id: number,
  changes: { url?: string; description?: string; eventTypes?: string[]; enabled?: boolean },
  disabledReason: string | null = null,
): Promise<WebhookEndpointRow | null> {
  const enabled = changes.enabled ?? null;
  const [row] = await db<WebhookEndpointRow[]>`
    UPDATE webhook_endpoints SET
      url = coalesce(${changes.url ?? null}::text, url),
      description = coalesce(${changes.description ?? null}::text, description),
      event_types = coalesce(${changes.eventTypes ? db.array(changes.eventTypes) : null}::text[], event_types),
      enabled = coalesce(${enabled}::boolean, enabled),
      disabled_reason = CASE WHEN coalesce(${enabled}::boolean, enabled) THEN NULL
                             WHEN ${enabled}::boolean IS NOT NULL THEN ${disabledReason}::text
                             ELSE disabled_reason END,
      paused_until = CASE WHEN ${enabled}::boolean THEN NULL ELSE paused_until END,
      updated_at = now()
    WHERE id = ${id} RETURNING ${db.unsafe(ENDPOINT_COLUMNS)}`;
  return row ?? null;
}

export async function deleteWebhookEndpoint(db: Db, id: number): Promise<boolean> {
  const deleted = await db`DELETE FROM webhook_endpoints WHERE id = ${id}`;
  return deleted.count > 0;
}

/** The new secret signs from now on; the old one too until `graceUntil` (now: at once no more). */
export async function rotateWebhookSecret(
  db: Db,
  id: number,
  secret: string,
  graceMs: number,
): Promise<WebhookEndpointRow | null> {
  const [row] = await db.unsafe<WebhookEndpointRow[]>(
    `UPDATE webhook_endpoints SET
       previous_secret = CASE WHEN $3::float8 > 0 THEN secret END,
       previous_secret_until = CASE WHEN $3::float8 > 0 THEN now() + make_interval(secs => $3::float8 / 1000) END,
       secret = $2, secret_rotated_at = now(), updated_at = now()
     WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
    [id, secret, graceMs],
  );
  return row ?? null;
}

/** The signing view of endpoints (the drainer's): the previous secret only while its grace lasts. */
export async function getEndpointSigning(
  db: Db,
  ids: readonly number[],
): Promise<Map<number, EndpointSigning>> {
  if (ids.length === 0) return new Map();
  const rows = await db<{ id: number; url: string; enabled: boolean; secrets: string[] }[]>`
    SELECT id::int AS id, url, enabled,
           array_remove(ARRAY[secret, CASE WHEN previous_secret_until > now() THEN previous_secret END], NULL)
             AS secrets
    FROM webhook_endpoints WHERE id = ANY (${db.array([...ids])}::bigint[])`;
  return new Map(rows.map((r) => [r.id, r]));
}

/** Holds every message of an endpoint until `until` (a 429's Retry-After). */
export async function pauseWebhookEndpoint(db: Db, id: number, until: Date): Promise<void> {
  await db`UPDATE webhook_endpoints SET paused_until = greatest(paused_until, ${until}) WHERE id = ${id}`;
}

/**
 * Takes up to `limit` due messages of enabled, unpaused endpoints (at most `perEndpoint` of one endpoint, so
 * one busy receiver cannot take a whole batch), oldest due first, and leases them for `leaseMs`: a drainer
 * that dies mid-batch leaves them due again when the lease ends.
 */
export async function claimDueWebhookMessages(
  db: Db,
  options: { limit: number; perEndpoint: number; leaseMs: number },
): Promise<WebhookMessageRow[]> {
  return db.unsafe<WebhookMessageRow[]>(
    `WITH due AS (
       SELECT m.id, row_number() OVER (PARTITION BY m.endpoint_id ORDER BY m.next_attempt_at, m.id) AS n
       FROM webhook_messages AS m
       JOIN webhook_endpoints AS e ON e.id = m.endpoint_id
       WHERE m.state = 'pending' AND m.next_attempt_at <= now()
         AND e.enabled AND (e.paused_until IS NULL OR e.paused_until <= now())
       ORDER BY m.next_attempt_at
       LIMIT $1::int * 20
     ), picked AS (
       SELECT m.id FROM webhook_messages AS m JOIN due ON due.id = m.id
       WHERE due.n <= $2::int ORDER BY m.next_attempt_at LIMIT $1::int
       FOR UPDATE OF m SKIP LOCKED
     )
     UPDATE webhook_messages AS m
     SET next_attempt_at = now() + make_interval(secs => $3::float8 / 1000)
     FROM picked WHERE m.id = picked.id
     RETURNING ${messageColumns('m.')}`,
    [options.limit, options.perEndpoint, options.leaseMs],
  );
}

/** One attempt's result: the log row and the message's next state, together. */
export async function recordWebhookAttempt(
  db: Sql,
  attempt: {
    messageId: string;
    outcome: WebhookAttemptOutcome;
    statusCode: number | null;
    latencyMs: number;
    responseBody: string | null;
    error: string | null;
    /** When to try again (outcome `retry`). */
    nextAttemptAt: Date | null;
  },
): Promise<void> {
  const state: WebhookMessageState = attempt.outcome === 'retry' ? 'pending' : attempt.outcome;
  await db.begin(async (tx) => {
    await tx`
      INSERT INTO webhook_attempts (message_id, outcome, status_code, latency_ms, response_body, error)
      VALUES (${attempt.messageId}, ${attempt.outcome}, ${attempt.statusCode}, ${attempt.latencyMs},
              ${attempt.responseBody}, ${attempt.error})`;
    await tx`
      UPDATE webhook_messages SET
        state = ${state},
        attempts = attempts + 1,
        next_attempt_at = coalesce(${attempt.nextAttemptAt}, next_attempt_at),
        last_status = ${attempt.statusCode},
        last_error = ${attempt.error},
        finished_at = ${state === 'pending' ? null : new Date()}
      WHERE id = ${attempt.messageId}`;
  });
}

/** "Send again": a new round for a message in any state, due at once, under the same id. */
export async function redeliverWebhookMessage(db: Db, endpointId: number, id: string): Promise<boolean> {
  const updated = await db`
    UPDATE webhook_messages SET state = 'pending', attempts = 0, round_started_at = now(),
      next_attempt_at = now(), finished_at = NULL
    WHERE id = ${id} AND endpoint_id = ${endpointId}`;
  return updated.count > 0;
}

/** An endpoint's messages, newest first, each with its latest attempts. */
export async function listWebhookMessages(
  db: Db,
  endpointId: number,
  options: { limit: number; state?: WebhookMessageState | undefined },
): Promise<WebhookMessageRow[]> {
  return db.unsafe<WebhookMessageRow[]>(
    `SELECT ${MESSAGE_COLUMNS} FROM webhook_messages
     WHERE endpoint_id = $1 AND ($2::text IS NULL OR state = $2)
     ORDER BY created_at DESC, id DESC LIMIT $3`,
    [endpointId, options.state ?? null, options.limit],
  );
}

export async function getWebhookMessage(db: Db, id: string): Promise<WebhookMessageRow | null> {
  const [row] = await db.unsafe<WebhookMessageRow[]>(
    `SELECT ${MESSAGE_COLUMNS} FROM webhook_messages WHERE id = $1`,
    [id],
  );
  return row ?? null;
}

export async function listWebhookAttempts(
  db: Db,
  messageIds: readonly string[],
): Promise<Map<string, WebhookAttemptRow[]>> {
  const byMessage = new Map<string, WebhookAttemptRow[]>();
  if (messageIds.length === 0) return byMessage;
  const rows = await db<WebhookAttemptRow[]>`
    SELECT id::int AS id, message_id AS "messageId", attempted_at AS "attemptedAt", outcome,
           status_code AS "statusCode", latency_ms AS "latencyMs", response_body AS "responseBody", error
    FROM webhook_attempts WHERE message_id = ANY (${db.array([...messageIds])}::text[])
    ORDER BY attempted_at DESC, id DESC`;
  for (const row of rows) {
    const list = byMessage.get(row.messageId) ?? [];
    list.push(row);
    byMessage.set(row.messageId, list);
  }
  return byMessage;
}

/** What the drainer needs to decide how long to wait, and the gauges. */
export interface WebhookQueueStats {
  enabledEndpoints: number;
  pending: number;
  /** Seconds the oldest pending message of an enabled endpoint has waited; 0 when none waits. */
  oldestPendingAgeSeconds: number;
  /** Milliseconds until the next pending message of an enabled endpoint is due; null when none waits. */
  nextDueInMs: number | null;
  /** Endpoints with a message that went dead in the last hour (the dead-letter alert). */
  deadLetteringEndpoints: number;
}

export async function getWebhookQueueStats(db: Db): Promise<WebhookQueueStats> {
  const [row] = await db<WebhookQueueStats[]>`
    SELECT
      (SELECT count(*)::int FROM webhook_endpoints WHERE enabled) AS "enabledEndpoints",
      count(m.id)::int AS pending,
      coalesce(extract(epoch FROM now() - min(m.created_at)), 0)::float8 AS "oldestPendingAgeSeconds",
      CASE WHEN count(m.id) = 0 THEN NULL
           ELSE greatest(0, ceil(extract(epoch FROM
             min(greatest(m.next_attempt_at, coalesce(e.paused_until, m.next_attempt_at))) - now()) * 1000))::int
      END AS "nextDueInMs",
      (SELECT count(DISTINCT endpoint_id)::int FROM webhook_messages
        WHERE state = 'dead' AND finished_at > now() - interval '1 hour') AS "deadLetteringEndpoints"
    FROM webhook_messages AS m JOIN webhook_endpoints AS e ON e.id = m.endpoint_id AND e.enabled
    WHERE m.state = 'pending'`;
  return row!;
}

/** Deletes log rows and finished messages older than the retention, at most `limit` of each per call. */
export async function pruneWebhookLog(db: Db, retentionMs: number, limit: number): Promise<number> {
  const attempts = await db`
    DELETE FROM webhook_attempts WHERE id IN (
      SELECT id FROM webhook_attempts
      WHERE attempted_at < now() - make_interval(secs => ${retentionMs}::float8 / 1000) LIMIT ${limit})`;
  const messages = await db`
    DELETE FROM webhook_messages WHERE id IN (
      SELECT id FROM webhook_messages
      WHERE finished_at < now() - make_interval(secs => ${retentionMs}::float8 / 1000) LIMIT ${limit})`;
  return attempts.count + messages.count;
}

/** Every endpoint for an escrow export: what a restore needs, without the secrets. */
export async function listWebhookEndpointsForEscrow(db: Db): Promise<WebhookEndpointRow[]> {
  return listWebhookEndpoints(db);
}
