// Idempotency-Key on API POSTs (API.md): the same key and request replay the first response; keys are per API
// key and kept 24 h. The HTTP side (hashing the request, replaying, 409/422) is routes/middleware/idempotency.ts.
import type { Logger } from '../shared/logger.ts';
import {
  claimIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  type IdempotencyClaim,
  releaseIdempotencyKey,
  type StoredResponse,
  saveIdempotentResponse,
} from '../stores/idempotency_store.ts';
import type { Db } from '../stores/sql.ts';

export type { IdempotencyClaim, StoredResponse };

/** One claim in this many also sweeps expired keys (in the background): no timer, no separate job. */
const SWEEP_EVERY = 200;

/** Claims `key` for this request (or finds it replayable, in progress, or used for another request). */
export async function claimRequest(
  deps: { sql: Db; logger: Logger },
  claim: { owner: string; key: string; requestHash: string },
): Promise<IdempotencyClaim> {
  if (Math.random() < 1 / SWEEP_EVERY) {
    deleteExpiredIdempotencyKeys(deps.sql).catch((err) =>
      deps.logger.warn({ err }, 'could not sweep idempotency keys'),
    );
  }
  return claimIdempotencyKey(deps.sql, claim.owner, claim.key, claim.requestHash);
}

/** Keeps the response for replays of the same key. */
export function keepResponse(db: Db, owner: string, key: string, response: StoredResponse): Promise<void> {
  return saveIdempotentResponse(db, owner, key, response);
}

/** Frees a claim whose response was not kept (a 429 or 5xx is worth retrying under the same key). */
export function releaseRequest(db: Db, owner: string, key: string): Promise<void> {
  return releaseIdempotencyKey(db, owner, key);
}
