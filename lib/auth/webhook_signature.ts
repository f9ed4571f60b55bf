import { hmacSha256Hex, timingSafeEqualString } from '../shared/crypto.ts';

/** Deliveries signed more than this far from now (either way) are rejected as stale or replayed. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` for `rawBody` at `timestampSeconds`. */
export async function signWebhook(
  secret: string,
  rawBody: string,
  timestampSeconds: number,
): Promise<string> {
  const t = Math.floor(timestampSeconds);
  return `t=${t},v1=${await hmacSha256Hex(secret, `${t}.${rawBody}`)}`;
}

/** A signature header that is well formed and within the replay window: its timestamp and its v1 values. */
export type SignatureHeader =
  | { ok: true; timestamp: string; signatures: string[] }
  | { ok: false; reason: string };

/**
 * Reads an `X-Lifeline-Signature` header without the body: present, with a `t=` timestamp inside the replay window
 * and at least one `v1=` value. Routes call it before reading a body, so an unsigned or stale request costs no
 * body bytes.
 */
export function readSignatureHeader(header: string | null | undefined, nowSeconds: number): SignatureHeader {
  if (!header) return { ok: false, reason: 'missing X-Lifeline-Signature header' };
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') timestamp = value;
    else if (key === 'v1') signatures.push(value.toLowerCase());
  }
  if (!timestamp || !/^\d{1,12}$/.test(timestamp))
    return { ok: false, reason: 'signature has no valid t= timestamp' };
  if (signatures.length === 0) return { ok: false, reason: 'signature has no v1= value' };
  if (Math.abs(nowSeconds - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS) {
    return { ok: false, reason: `signature timestamp is outside the ${WEBHOOK_TOLERANCE_SECONDS} s window` };
  }
  return { ok: true, timestamp, signatures };
}

/**
 * Checks an `X-Lifeline-Signature` header against the raw request bytes (never re-serialised JSON):
 * a v1 HMAC that matches in constant time, within the replay window. Several v1 values are allowed
 * so a sender can sign with an old and a new secret while rotating.
 */
export async function verifyWebhookSignature(
  secret: string,
  header: string | null | undefined,
  rawBody: string,
  nowSeconds: number,
): Promise<SignatureCheck> {
  const parsed = readSignatureHeader(header, nowSeconds);
  if (!parsed.ok) return parsed;
  const { timestamp, signatures } = parsed;
  const expected = await hmacSha256Hex(secret, `${timestamp}.${rawBody}`);
  // Check every candidate so timing does not reveal which one matched.
  let match = false;
  for (const candidate of signatures) match = timingSafeEqualString(candidate, expected) || match;
  return match ? { ok: true } : { ok: false, reason: 'signature does not match' };
}
