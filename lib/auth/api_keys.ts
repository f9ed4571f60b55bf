import { randomToken, sha256Hex } from '../shared/crypto.ts';

import {
  API_KEY_SCOPES,
  type ApiKeyRow,
  type ApiKeyScope,
  getActiveApiKeyByHash,
  touchApiKey,
} from '../stores/api_key_store.ts';
import type { Db } from '../stores/sql.ts';

export { API_KEY_SCOPES, type ApiKeyScope };
/** A stored API key as the web tier knows it (never its secret: only a hash is stored). */
export type StoredApiKey = ApiKeyRow;

/** Every new key starts with this, so leaked keys are easy to spot in logs and secret scanners. */
export const API_KEY_PREFIX = 'll_';

/** A fresh API key: `ll_` and 40 base62 characters (238 bits). Shown once; only its hash is stored. */
export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomToken(40)}`;
}

/** API keys are high-entropy secrets, so a fast hash is the right one (no password stretching needed). */
export function hashApiKey(key: string): Promise<string> {
  return sha256Hex(`lifeline-api-key:${key}`);
}

/** The part of a key that lists and logs may show. */
export function getApiKeyDisplayPrefix(key: string): string {
  return `${key.slice(0, 7)}…`;
}

/** True when a key with `granted` scopes may act with `required`; admin implies every scope. */
export function hasScope(granted: readonly string[], required: ApiKeyScope): boolean {
  return granted.includes('admin') || granted.includes(required);
}

/** The active (unrevoked) key with this hash, or null. */
export function findActiveApiKey(db: Db, keyHash: string): Promise<StoredApiKey | null> {
  return getActiveApiKeyByHash(db, keyHash);
}

/** Records that a key was used (its last_used_at). */
export function recordApiKeyUse(db: Db, id: number): Promise<void> {
  return touchApiKey(db, id);
}
