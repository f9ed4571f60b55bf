import type { Db } from './sql.ts';

/** How long a key and its response are kept (and replayed). */
export const IDEMPOTENCY_KEY_TTL_HOURS = 24;
/** A claim older than this without a response is from a request that died; another may take it over. */
export const IDEMPOTENCY_CLAIM_STALE_SECONDS = 60;

/** The response kept for replay: status, the headers that matter, and the JSON body. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' }
  | { kind: 'replay'; response: StoredResponse };

/**
 * Claims (owner, key) for a request with `requestHash`: the first caller (or one taking over a stale claim)
 * gets `claimed` and must finish with saveIdempotentResponse or releaseIdempotencyKey; later callers get the
 * stored response, `in_progress` while the first runs, or `mismatch` when their request differs.
 */
export async function claimIdempotencyKey(
  db: Db,
  owner: string,
  key: string,
  requestHash: string,
): Promise<IdempotencyClaim> {
  // An expired key is as good as new.
  await db`
    DELETE FROM idempotency_keys WHERE owner = ${owner} AND key = ${key}
      AND created_at < now() - make_interval(hours => ${IDEMPOTENCY_KEY_TTL_HOURS})`;
  const inserted = await db`
    INSERT INTO idempotency_keys (owner, key, request_hash) VALUES (${owner}, ${key}, ${requestHash})
    ON CONFLICT DO NOTHING RETURNING key`;
  if (inserted.length > 0) return { kind: 'claimed' };
  const rows = await db<{ requestHash: string; responseStatus: number | null; responseBody: unknown }[]>`
    SELECT request_hash AS "requestHash", response_status AS "responseStatus", response_body AS "responseBody"
    FROM idempotency_keys WHERE owner = ${owner} AND key = ${key}`;
  const row = rows[0];
  if (!row) return claimIdempotencyKey(db, owner, key, requestHash); // released meanwhile
  if (row.requestHash !== requestHash) return { kind: 'mismatch' };
  if (row.responseStatus === null) {
    const taken = await db`
      UPDATE idempotency_keys SET created_at = now()
      WHERE owner = ${owner} AND key = ${key} AND response_status IS NULL
        AND created_at < now() - make_interval(secs => ${IDEMPOTENCY_CLAIM_STALE_SECONDS})
      RETURNING key`;
    return taken.length > 0 ? { kind: 'claimed' } : { kind: 'in_progress' };
  }
  const stored = row.responseBody as { headers?: Record<string, string>; body?: unknown } | null;
  return {
    kind: 'replay',
    response: { status: row.responseStatus, headers: stored?.headers ?? {}, body: stored?.body ?? null },
  };
}

/** Records the response of a claimed key, for replay. */
export async function saveIdempotentResponse(
  db: Db,
  owner: string,
  key: string,
  response: StoredResponse,
): Promise<void> {
  await db`
    UPDATE idempotency_keys
    SET response_status = ${response.status},
        response_body = ${db.json({ headers: response.headers, body: response.body } as never)}
    WHERE owner = ${owner} AND key = ${key}`;
}

/** Gives a claim up (the request failed in a way worth retrying), so the same key may run again. */
export async function releaseIdempotencyKey(db: Db, owner: string, key: string): Promise<void> {
  await db`DELETE FROM idempotency_keys WHERE owner = ${owner} AND key = ${key} AND response_status IS NULL`;
}

/** Forgets keys past their lifetime. */
export async function deleteExpiredIdempotencyKeys(db: Db): Promise<number> {
  const rows = await db`
    DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => ${IDEMPOTENCY_KEY_TTL_HOURS})
    RETURNING 1`;
  return rows.length;
}
