import { z } from 'zod';
import { NotFoundError } from '../shared/errors.ts';
import { fieldProblem } from '../shared/field_problems.ts';
import { type ApiKeyRow, insertApiKey, listApiKeys, revokeApiKey } from '../stores/api_key_store.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import type { Db, Sql } from '../stores/sql.ts';
import { API_KEY_SCOPES, generateApiKey, getApiKeyDisplayPrefix, hashApiKey } from './api_keys.ts';

/** POST /api/v1/keys body (and the operations page's form). */
export const createApiKeyInputSchema = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  scopes: z
    .array(z.enum(API_KEY_SCOPES))
    .min(1, fieldProblem('chooseScope'))
    .transform((s) => [...new Set(s)]),
});
export type CreateApiKeyInput = z.infer<typeof createApiKeyInputSchema>;

/** An API key as listed: never the key itself, only its display prefix. */
export const apiKeySchema = z.object({
  id: z.number().int(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.enum(API_KEY_SCOPES)),
  createdBy: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
export type ApiKey = z.infer<typeof apiKeySchema>;

/** The answer to a creation: the key in clear, this once. */
export const createdApiKeySchema = apiKeySchema.extend({
  key: z.string().describe('the secret; shown only in this response, stored only as a hash'),
});

/** Projects a stored key to its listed shape. */
export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

/** Creates a key (stored as a hash) and audits it; the clear key is returned once, to show once. */
export async function issueApiKey(
  sql: Sql,
  input: CreateApiKeyInput,
  actor: string,
): Promise<{ row: ApiKeyRow; key: string }> {
  const key = generateApiKey();
  const row = await sql.begin(async (tx) => {
    const row = await insertApiKey(tx, {
      name: input.name,
      prefix: getApiKeyDisplayPrefix(key),
      keyHash: await hashApiKey(key),
      scopes: input.scopes,
      createdBy: actor,
    });
    await insertAuditEntry(tx, {
      code: null,
      actor,
      action: 'apikey.created',
      after: { id: row.id, name: row.name, scopes: row.scopes },
    });
    return row;
  });
  return { row, key };
}

/** Revokes a live key and audits it; 404 when no live key has this id. */
export async function revokeIssuedApiKey(sql: Sql, id: number, actor: string): Promise<void> {
  await sql.begin(async (tx) => {
    if (!(await revokeApiKey(tx, id))) throw new NotFoundError(`No live API key ${id}.`);
    await insertAuditEntry(tx, { code: null, actor, action: 'apikey.revoked', after: { id } });
  });
}

/** Every key (active and revoked), newest first, in the API's shape. */
export async function listIssuedApiKeys(db: Db): Promise<ApiKey[]> {
  return (await listApiKeys(db)).map(toApiKey);
}
