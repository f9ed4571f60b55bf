// One attempt of one message: a POST under the outgoing-request rule (ADR 0058: checked at connect time, no
// private address unless OUTGOING_ALLOWED_PRIVATE allows it), one deadline from connect to the last byte read,
// no redirect followed, and at most RESPONSE_KEEP_BYTES of the answer read (the rest is never downloaded).
import { OutgoingRequestRefused } from '../shared/outgoing_request.ts';
import type { AttemptResult } from './retry_policy.ts';

/** What of an answer is kept in the delivery log. */
export const RESPONSE_KEEP_BYTES = 1024;

export interface SentAttempt {
  result: AttemptResult;
  latencyMs: number;
  /** At most RESPONSE_KEEP_BYTES of the answer, as UTF-8 (a cut character is replaced). */
  responseBody: string | null;
  /** Why there was no answer, or a note about it (never a secret: URLs are sent without user-info). */
  error: string | null;
}

async function readCapped(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - size;
      chunks.push(value.length > room ? value.subarray(0, room) : value);
      size += Math.min(value.length, room);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function sendWebhook(
  fetchFn: typeof fetch,
  request: { url: string; headers: Record<string, string>; body: string; timeoutMs: number },
  now: () => number = Date.now,
): Promise<SentAttempt> {
  const started = now();
  const signal = AbortSignal.timeout(request.timeoutMs);
  try {
    const response = await fetchFn(request.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Lifeline-Webhooks/1',
        ...request.headers,
      },
      body: request.body,
      redirect: 'manual',
      signal,
    });
    const responseBody = await readCapped(response, RESPONSE_KEEP_BYTES).catch(() => '');
    const redirected = response.status >= 300 && response.status < 400;
    return {
      result: { kind: 'answer', status: response.status, retryAfter: response.headers.get('retry-after') },
      latencyMs: now() - started,
      responseBody,
      error: redirected ? 'redirects are not followed' : null,
    };
  } catch (error) {
    const latencyMs = now() - started;
    if (error instanceof OutgoingRequestRefused)
      return {
        result: { kind: 'refused' },
        latencyMs,
        responseBody: null,
        error: error.message.slice(0, 300),
      };
    if (signal.aborted)
      return {
        result: { kind: 'no-answer', why: 'timeout' },
        latencyMs,
        responseBody: null,
        error: `no answer within ${request.timeoutMs} ms`,
      };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const text = cause?.code
      ? `${cause.code}: ${cause.message ?? ''}`
      : String((error as Error).message ?? error);
    return {
      result: { kind: 'no-answer', why: 'connection' },
      latencyMs,
      responseBody: null,
      error: text.slice(0, 300),
    };
  }
}
