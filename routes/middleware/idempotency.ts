import type { MiddlewareHandler } from 'hono';
import { claimRequest, keepResponse, releaseRequest } from '../../lib/idempotency/idempotency_keys.ts';
import { sha256Hex } from '../../lib/shared/crypto.ts';
import { AppError, BadRequestError, ConflictError } from '../../lib/shared/errors.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Response headers worth replaying (the body and status are always kept). */
const KEPT_HEADERS = ['content-type', 'location'];

/** JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function canonicalBody(raw: string): string {
  try {
    return canonicalJson(JSON.parse(raw));
  } catch {
    return raw;
  }
}

/**
 * `Idempotency-Key` on a POST (after API-key auth): the same key with the same request replays the first
 * response (`Idempotent-Replayed: true`); with a different request it is a 422; while the first is still
 * running, a 409. Keys are per API key and kept 24 h. Responses worth retrying (429, 5xx) are not kept;
 * `redact` fields are left out of the stored body (a replay of a key creation does not show the key again).
 */
export function idempotency(
  deps: Pick<WebDeps, 'sql' | 'logger'>,
  options: { redact?: string[] } = {},
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header('Idempotency-Key');
    if (key === undefined) return next();
    if (!KEY_PATTERN.test(key)) {
      throw new BadRequestError('Idempotency-Key must be 1 to 255 visible ASCII characters.', [
        { path: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' },
      ]);
    }
    const owner = `apikey:${c.get('apiKey').id}`;
    const requestHash = await sha256Hex(
      `${c.req.method} ${c.req.path}\n${canonicalBody(await c.req.text())}`,
    );
    const claim = await claimRequest(deps, { owner, key, requestHash });
    if (claim.kind === 'mismatch') {
      throw new AppError(
        422,
        'idempotency-key-reused',
        'Idempotency key reused',
        'This Idempotency-Key was already used for a different request; use a new key.',
        { errors: [{ path: 'Idempotency-Key', message: 'was used for a different request' }] },
      );
    }
    if (claim.kind === 'in_progress') {
      const error = new ConflictError(
        'A request with this Idempotency-Key is still being processed; retry shortly.',
      );
      error.extra.headers = { 'Retry-After': '1' };
      throw error;
    }
    if (claim.kind === 'replay') {
      const { status, headers, body } = claim.response;
      return new Response(body === null ? null : JSON.stringify(body), {
        status,
        headers: { ...headers, 'Idempotent-Replayed': 'true', 'Cache-Control': 'no-store' },
      });
    }
    let kept = false;
    try {
      await next();
      const res = c.res;
      if (res.status < 500 && res.status !== 429) {
        const headers: Record<string, string> = {};
        for (const name of KEPT_HEADERS) {
          const value = res.headers.get(name);
          if (value !== null) headers[name] = value;
        }
        const text = await res.clone().text();
        const body = text === '' ? null : JSON.parse(text);
        // Secrets shown once (a new API key) are never stored for replay.
        if (body && typeof body === 'object') for (const field of options.redact ?? []) delete body[field];
        await keepResponse(deps.sql, owner, key, { status: res.status, headers, body });
        kept = true;
      }
    } finally {
      if (!kept) await releaseRequest(deps.sql, owner, key).catch(() => {});
    }
  };
}
