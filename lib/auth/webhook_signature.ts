import { hmacSha256Hex, timingSafeEqualString } from '../shared/crypto.ts';

/** Deliveries signed more than this far from now (either way) are rejected as stale or replayed. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/**
 * The kinds of message Lifeline and the WordPress plugin sign with their shared secret. Each is signed over its
 * own prefix (v2), so a signature made for one kind is never valid for another: a listing answer cannot be
 * replayed as a backfill batch, nor an event as a listing request.
 */
export type SignedKind = 'event' | 'backfill' | 'listing-request' | 'listing-answer';

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` for `rawBody` at `timestampSeconds`: the
 * scheme of the report and CDN webhooks (their receivers are the operator's own), and the one pre-v2 plugins use.
 */
export async function signWebhook(
  secret: string,
  rawBody: string,
  timestampSeconds: number,
): Promise<string> {
  const t = Math.floor(timestampSeconds);
  return `t=${t},v1=${await hmacSha256Hex(secret, `${t}.${rawBody}`)}`;
}

/**
 * The v2 string: `lifeline/<kind>`, a line feed, then `<t>.<message>`. The kind comes first, so no v2 string of
 * one kind equals one of another kind, nor any v1 string (those start with the digits of `t`).
 */
const v2String = (kind: SignedKind, t: string | number, message: string) =>
  `lifeline/${kind}\n${t}.${message}`;

/** `t=<unix seconds>[,n=<nonce>],v2=<hex HMAC-SHA256(secret, "lifeline/<kind>\n<t>.<message>")>`. */
export async function signKind(
  secret: string,
  kind: SignedKind,
  message: string,
  timestampSeconds: number,
  nonce?: string,
): Promise<string> {
  const t = Math.floor(timestampSeconds);
  const n = nonce === undefined ? '' : `,n=${nonce}`;
  return `t=${t}${n},v2=${await hmacSha256Hex(secret, v2String(kind, t, message))}`;
}

/** The signed string of a listing request: method, host, request target and nonce, one a line. */
export function listingRequestMessage(method: string, host: string, target: string, nonce: string): string {
  return `${method.toUpperCase()}\n${host.toLowerCase()}\n${target}\n${nonce}`;
}

/** The signed string of a listing answer: the nonce of the request it answers, then the raw body. */
export function listingAnswerMessage(nonce: string, rawBody: string): string {
  return `${nonce}\n${rawBody}`;
}

interface ParsedHeader {
  timestamp: string | undefined;
  nonce: string | undefined;
  v1: string[];
  v2: string[];
}

function parseHeader(header: string): ParsedHeader {
  const parsed: ParsedHeader = { timestamp: undefined, nonce: undefined, v1: [], v2: [] };
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') parsed.timestamp = value;
    else if (key === 'n') parsed.nonce = value;
    else if (key === 'v1') parsed.v1.push(value.toLowerCase());
    else if (key === 'v2') parsed.v2.push(value.toLowerCase());
  }
  return parsed;
}

async function matchAny(secret: string, candidates: string[], signed: string): Promise<boolean> {
  const expected = await hmacSha256Hex(secret, signed);
  // Check every candidate so timing does not reveal which one matched.
  let match = false;
  for (const candidate of candidates) match = timingSafeEqualString(candidate, expected) || match;
  return match;
}

function checkTime(timestamp: string | undefined, nowSeconds: number): SignatureCheck {
  if (!timestamp || !/^\d{1,12}$/.test(timestamp))
    return { ok: false, reason: 'signature has no valid t= timestamp' };
  if (Math.abs(nowSeconds - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS) {
    return { ok: false, reason: `signature timestamp is outside the ${WEBHOOK_TOLERANCE_SECONDS} s window` };
  }
  return { ok: true };
}

/** What a signature header says before the body is read: its timestamp, or why it is refused. */
export type SignatureHeader = { ok: true; timestamp: string } | { ok: false; reason: string };

/**
 * Reads an `X-Lifeline-Signature` header without the body: present, with a `t=` timestamp inside the replay window
 * and at least one `v1=` or `v2=` value. Routes call it before reading a body, so an unsigned or stale request
 * costs no body bytes; the HMAC itself is checked once the body is read.
 */
export function readSignatureHeader(header: string | null | undefined, nowSeconds: number): SignatureHeader {
  if (!header) return { ok: false, reason: 'missing X-Lifeline-Signature header' };
  const parsed = parseHeader(header);
  const time = checkTime(parsed.timestamp, nowSeconds);
  if (!time.ok) return time;
  if (parsed.v1.length === 0 && parsed.v2.length === 0)
    return { ok: false, reason: 'signature has no v1= or v2= value' };
  return { ok: true, timestamp: parsed.timestamp as string };
}

/**
 * Checks an `X-Lifeline-Signature` header (v1) against the raw request bytes (never re-serialised JSON): a
 * v1 HMAC that matches in constant time, within the replay window. Several v1 values are allowed so a sender
 * can sign with an old and a new secret while rotating.
 */
export async function verifyWebhookSignature(
  secret: string,
  header: string | null | undefined,
  rawBody: string,
  nowSeconds: number,
): Promise<SignatureCheck> {
  if (!header) return { ok: false, reason: 'missing X-Lifeline-Signature header' };
  const parsed = parseHeader(header);
  const time = checkTime(parsed.timestamp, nowSeconds);
  if (!time.ok) return time;
  if (parsed.v1.length === 0) return { ok: false, reason: 'signature has no v1= value' };
  const match = await matchAny(secret, parsed.v1, `${parsed.timestamp}.${rawBody}`);
  return match ? { ok: true } : { ok: false, reason: 'signature does not match' };
}

/**
 * Checks a kind-bound (v2) signature of `message`. `legacy`: with no v2 value, a v1 signature of the raw message
 * is accepted instead (signed WordPress events and backfill batches from plugins that predate v2; no other kind
 * is ever v1-signed any more, and those two kinds' bodies cannot pass for each other). When v2 values are
 * present, only they count.
 */
export async function verifyKindSignature(
  secret: string,
  kind: SignedKind,
  header: string | null | undefined,
  message: string,
  nowSeconds: number,
  options: { legacy?: boolean } = {},
): Promise<SignatureCheck> {
  if (!header) return { ok: false, reason: 'missing X-Lifeline-Signature header' };
  const parsed = parseHeader(header);
  if (parsed.v2.length === 0) {
    if (options.legacy) return verifyWebhookSignature(secret, header, message, nowSeconds);
    return { ok: false, reason: `signature has no v2= value (a ${kind} must be signed for its kind)` };
  }
  const time = checkTime(parsed.timestamp, nowSeconds);
  if (!time.ok) return time;
  const match = await matchAny(secret, parsed.v2, v2String(kind, parsed.timestamp!, message));
  return match ? { ok: true } : { ok: false, reason: 'signature does not match' };
}
