import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import type { Metrics } from '../shared/metrics.ts';
import type { Sql } from '../stores/sql.ts';
import { createCanonicalTargetPolicy } from '../targets/target_rule.ts';
import type { InvalidationBus } from './invalidation_bus.ts';
import { createLayeredResolver, type LayeredResolver } from './layered_resolver.ts';
import { createPostgresInvalidationBus } from './postgres_invalidation_bus.ts';
import { createRedisInvalidationBus } from './redis_invalidation_bus.ts';
import { createRedisServingStore } from './redis_serving_store.ts';
import type { ServingStore } from './serving_store.ts';
import { createUpstashServingStore } from './upstash_serving_store.ts';

/** The serving store the configuration names (REDIS_URL, else Upstash REST), or undefined. */
export function createConfiguredServingStore(config: Config, logger?: Logger): ServingStore | undefined {
  const redis = config.redis;
  if (redis?.kind === 'tcp') return createRedisServingStore({ ...redis, logger });
  if (redis?.kind === 'upstash') return createUpstashServingStore(redis);
  return undefined;
}

/**
 * The bus: Redis pub/sub with REDIS_URL, else Postgres LISTEN/NOTIFY (also under `npm start`: its PGlite front fans
 * notifications out to the web process, ADR 0022).
 */
export function createConfiguredInvalidationBus(
  config: Config,
  deps: { sql: Sql; logger?: Logger },
): InvalidationBus {
  if (config.redis?.kind === 'tcp')
    return createRedisInvalidationBus({ url: config.redis.url, keyPrefix: config.redis.keyPrefix, ...deps });
  return createPostgresInvalidationBus(deps);
}

/**
 * The resolver a process uses, from configuration. `web` caches and listens for changes; `worker` keeps no
 * cache and only announces them (its refreshes write the serving store and publish).
 */
export function createConfiguredResolver(
  config: Config,
  deps: {
    sql: Sql;
    metrics?: Metrics;
    logger?: Logger;
    role: 'web' | 'worker';
    /** Pool size behind `sql` (in-flight hot-path queries never exceed it); default DATABASE_POOL_SIZE. */
    poolSize?: number;
    /** The clock of the LRU's TTLs and stale window (tests move their own); default the runtime's. */
    now?: () => number;
  },
): LayeredResolver {
  const web = deps.role === 'web';
  return createLayeredResolver({
    sql: deps.sql,
    metrics: deps.metrics,
    logger: deps.logger,
    store: createConfiguredServingStore(config, deps.logger),
    bus: createConfiguredInvalidationBus(config, deps),
    subscribe: web,
    cacheMax: web ? config.resolver.cacheMax : 0,
    cacheMaxBytes: config.resolver.cacheMaxBytes,
    cacheTtlMs: config.resolver.cacheTtlMs,
    negativeTtlMs: config.resolver.negativeTtlMs,
    staleMaxMs: config.resolver.staleMaxMs,
    ...(deps.now ? { now: deps.now } : {}),
    storeTimeoutMs: config.resolver.servingStoreTimeoutMs,
    postgresConcurrency: deps.poolSize ?? config.databasePoolSize,
    // Stored targets are checked against the same rule every way in applies (records from the store or
    // Postgres that break it answer 404, counted as tampered).
    targetPolicy: createCanonicalTargetPolicy(config),
  });
}
