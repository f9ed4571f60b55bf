// Standard Webhooks signing (https://www.standardwebhooks.com, ADR 0082), written on node:crypto: the receiver
// gets `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature`, a space-separated list of
// `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, one per secret that signs (two during a rotation).
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks libraries read it. */
export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The key bytes of a `whsec_<base64>` secret. */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** One `v1,<base64>` signature of a message under one secret. */
export function signWithSecret(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`, 'utf8');
  return `v1,${mac.digest('base64')}`;
}

/** The three Standard Webhooks headers of one attempt, signed by every secret given (current first). */
export function standardWebhookHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signWithSecret(s, id, timestampSeconds, body)).join(' '),
  };
}

/** The body a message sends: the same bytes on every attempt (made from what the outbox row holds). */
export function webhookBody(message: {
  eventType: string;
  createdAt: Date;
  payload: Record<string, unknown>;
}): string {
  return JSON.stringify({
    type: message.eventType,
    timestamp: message.createdAt.toISOString(),
    data: message.payload,
  });
}
