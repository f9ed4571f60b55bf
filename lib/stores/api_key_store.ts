import type { Db } from './sql.ts';

export const API_KEY_SCOPES = ['links:read', 'links:write', 'moderation', 'admin'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export interface ApiKeyRow {
  id: number;
  name: string;
  prefix: string;
  scopes: ApiKeyScope[];
  createdBy: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const COLUMNS = `id, name, prefix, scopes, created_by AS "createdBy", created_at AS "createdAt",
  last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"`;

/** Stores a key by its hash; an existing hash is left as is. Returns the stored row. */
export async function insertApiKey(
  db: Db,
  key: { name: string; prefix: string; keyHash: string; scopes: ApiKeyScope[]; createdBy: string },
): Promise<ApiKeyRow> {
  const rows = await db<ApiKeyRow[]>`
    INSERT INTO api_keys (name, prefix, key_hash, scopes, created_by)
    VALUES (${key.name}, ${key.prefix}, ${key.keyHash}, ${db.array(key.scopes)}, ${key.createdBy})
    ON CONFLICT (key_hash) DO UPDATE SET revoked_at = NULL, scopes = EXCLUDED.scopes
    RETURNING ${db.unsafe(COLUMNS)}`;
  return rows[0]!;
}

/**
 * Stores a key by its hash unless that hash is stored already (live or revoked: a revoked key is never
 * brought back); true when inserted.
 */
export async function insertApiKeyIfAbsent(
  db: Db,
  key: { name: string; prefix: string; keyHash: string; scopes: ApiKeyScope[]; createdBy: string },
): Promise<boolean> {
  const rows = await db`
    INSERT INTO api_keys (name, prefix, key_hash, scopes, created_by)
    VALUES (${key.name}, ${key.prefix}, ${key.keyHash}, ${db.array(key.scopes)}, ${key.createdBy})
    ON CONFLICT (key_hash) DO NOTHING
    RETURNING id`;
  return rows.length > 0;
}

/** The live (unrevoked) key with this hash, or null. */
export async function getActiveApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRow | null> {
  const rows = await db<ApiKeyRow[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM api_keys WHERE key_hash = ${keyHash} AND revoked_at IS NULL`;
  return rows[0] ?? null;
}

/** Records use, at most once a minute per key so the hot API path does not write on every call. */
export async function touchApiKey(db: Db, id: number): Promise<void> {
  await db`
    UPDATE api_keys SET last_used_at = now()
    WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`;
}

/** Every key, newest first. */
export async function listApiKeys(db: Db): Promise<ApiKeyRow[]> {
  return db<ApiKeyRow[]>`SELECT ${db.unsafe(COLUMNS)} FROM api_keys ORDER BY id DESC`;
}

/** Revokes a key; returns false when no live key has this id. */
export async function revokeApiKey(db: Db, id: number): Promise<boolean> {
  const rows =
    await db`UPDATE api_keys SET revoked_at = now() WHERE id = ${id} AND revoked_at IS NULL RETURNING id`;
  return rows.length > 0;
}

/** How many keys exist at all (first-run detection). */
export async function countApiKeys(db: Db): Promise<number> {
  const rows = await db<{ n: number }[]>`SELECT count(*) AS n FROM api_keys`;
  return rows[0]?.n ?? 0;
}
