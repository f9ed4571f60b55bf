import type { Context } from 'hono';
import { LRUCache } from 'lru-cache';
import { findActiveApiKey, hashApiKey, recordApiKeyUse, type StoredApiKey } from '../../lib/auth/api_keys.ts';
import { UnauthorizedError } from '../../lib/shared/errors.ts';
import type { AppEnv, WebDeps } from '../app_env.ts';

/** A revoked key stops working within this long on every instance. */
export const API_KEY_CACHE_TTL_MS = 10_000;

type KeyCache = LRUCache<string, StoredApiKey | false>;
/** One cache per app (keyed by its pool), shared by every route group, so a revocation can clear it. */
const caches = new WeakMap<object, KeyCache>();

function getCache(sql: object): KeyCache {
  let cache = caches.get(sql);
  if (!cache) {
    cache = new LRUCache<string, StoredApiKey | false>({ max: 10_000, ttl: API_KEY_CACHE_TTL_MS });
    caches.set(sql, cache);
  }
  return cache;
}

/** Drops this instance's cached keys (after a revocation); other instances follow within the TTL. */
export function forgetCachedApiKeys(sql: object): void {
  caches.get(sql)?.clear();
}

/**
 * Bearer API-key authentication: the live key of the request's `Authorization: Bearer …` header, or
 * UnauthorizedError (401). Which scope a route needs is the authorize middleware's question (routes/route_rules.ts).
 */
export function createApiKeyAuthenticator(deps: Pick<WebDeps, 'sql' | 'logger'>) {
  const cache = getCache(deps.sql);

  return async function authenticateApiKey(c: Context<AppEnv>): Promise<StoredApiKey> {
    const header = c.req.header('Authorization') ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw new UnauthorizedError('Send an API key as "Authorization: Bearer <key>".');
    const hash = await hashApiKey(m[1]!);
    let key = cache.get(hash);
    if (key === undefined) {
      key = (await findActiveApiKey(deps.sql, hash)) ?? false;
      cache.set(hash, key);
    }
    if (!key) throw new UnauthorizedError('The API key is not valid or has been revoked.');
    recordApiKeyUse(deps.sql, key.id).catch((err) =>
      deps.logger.warn({ err }, 'could not record API key use'),
    );
    return key;
  };
}
