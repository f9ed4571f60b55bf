// Can this web instance serve redirects? The answer /readyz gives a load balancer (ADR 0021). Not "is every
// dependency up": a Postgres outage is shared by every instance, and taking them all out of the balancer would
// turn the redirects their caches can still answer into errors. So an instance is ready while it is not draining
// and at least one layer of the redirect ladder can answer: Postgres, the serving store, or its own LRU (live
// records in it).
import type { LinkResolver } from '../redirect/link_resolver.ts';
import type { ServingStore } from '../redirect/serving_store.ts';
import { pingDatabase } from '../stores/ping_database.ts';
import type { Db } from '../stores/sql.ts';
import { cacheCheck } from './cached_check.ts';
import type { DrainState } from './drain_state.ts';
import { probe } from './probe_checks.ts';

export interface WebReadinessChecks {
  postgres: 'ok' | 'down';
  /** 'none' without a serving store (REDIS_URL / Upstash unset). */
  servingStore: 'ok' | 'down' | 'none';
  /** warm: the LRU holds at least one live link record; cold: none; off: RESOLVER_CACHE_MAX=0. */
  cache: 'warm' | 'cold' | 'off';
}

export interface WebReadiness {
  status: 'ready' | 'draining' | 'unavailable';
  /** Absent while draining (nothing is checked then). */
  checks?: WebReadinessChecks;
}

export interface WebReadinessDeps {
  sql: Db;
  servingStore?: Pick<ServingStore, 'get'> | undefined;
  /** The resolver, when it keeps an LRU (RESOLVER_CACHE_MAX > 0): does the LRU hold a live record? */
  cache?: Pick<LinkResolver, 'hasLiveRecords'> | undefined;
  drain?: DrainState | undefined;
}

/** A key no link can have (codes never start with `_`): reading it proves the store answers. */
const PROBE_CODE = '_readyz';

/** The rule, on checks already made. */
export function decideWebReadiness(checks: WebReadinessChecks): WebReadiness['status'] {
  return checks.postgres === 'ok' || checks.servingStore === 'ok' || checks.cache === 'warm'
    ? 'ready'
    : 'unavailable';
}

/** Whether Postgres answers (/healthz's one question), asked at most once a second however often it is called. */
export function createPostgresCheck(sql: Db): () => Promise<'ok' | 'down'> {
  return cacheCheck(() => probe(() => pingDatabase(sql)));
}

/**
 * Checks Postgres and the serving store (in parallel, each within a second) and the LRU, then decides. The two
 * network checks are made at most once a second (cached_check.ts) however often it is asked; draining and the
 * LRU are read on every call.
 */
export function createWebReadinessCheck(deps: WebReadinessDeps): () => Promise<WebReadiness> {
  const store = deps.servingStore;
  const dependencies = cacheCheck(() =>
    Promise.all([
      probe(() => pingDatabase(deps.sql)),
      store ? probe(() => store.get(PROBE_CODE)) : Promise.resolve('none' as const),
    ]),
  );
  return async () => {
    if (deps.drain?.draining) return { status: 'draining' };
    const [postgres, servingStore] = await dependencies();
    const cache = deps.cache?.hasLiveRecords ? (deps.cache.hasLiveRecords() ? 'warm' : 'cold') : 'off';
    const checks: WebReadinessChecks = { postgres, servingStore, cache };
    return { status: deps.drain?.draining ? 'draining' : decideWebReadiness(checks), checks };
  };
}
