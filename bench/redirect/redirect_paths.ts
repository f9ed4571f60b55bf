// The three redirect paths the bench measures, the environment that selects each in our server, and which bare
// server does the same lookup.
import { REDIS_KEY_PREFIX, REDIS_URL } from './bench_settings.ts';

export type PathKey = 'lru' | 'serving_store' | 'postgres';

/** Every server the bench can start. */
export type ContestantName =
  | 'ours'
  | 'ours-b'
  | 'ours-x2'
  | 'bare-map'
  | 'bare-redis'
  | 'bare-redis-no-timeout'
  | 'bare-postgres'
  | 'bare-postgres-batched'
  | 'bare-resolver'
  | 'hono-only'
  | 'nginx'
  | 'npm-start';

export interface PathSpec {
  key: PathKey;
  title: string;
  /** Our server's environment on this path (an empty value: unset). */
  env: Record<string, string>;
  /** Codes requested (1..codes, uniformly at random). */
  codes: number;
  /** The bare server doing the same lookup as ours on this path (bare-map on the LRU path). */
  sameLookup: 'bare-map' | 'bare-redis' | 'bare-postgres';
  /** The bar: ours against the same-lookup baseline (docs/BENCHMARKS.md). */
  threshold: { rps: number; p99?: number };
  /** Servers measured beside ours, bare Map and the same-lookup baseline. */
  extras: ContestantName[];
}

export const PATHS: PathSpec[] = [
  {
    key: 'lru',
    title: 'LRU hit',
    // Entries live an hour here so every measured request is a hit (the default TTL is 60 s): six servers'
    // warm-ups and rounds take about 10 minutes.
    env: { REDIS_URL: '', RESOLVER_CACHE_MAX: '100000', RESOLVER_CACHE_TTL_MS: '3600000' },
    codes: 10_000,
    sameLookup: 'bare-map',
    threshold: { rps: 0.9, p99: 1.5 },
    extras: ['bare-resolver', 'hono-only', 'nginx', 'npm-start'],
  },
  {
    key: 'serving_store',
    title: 'Serving-store hit (LRU off)',
    env: { RESOLVER_CACHE_MAX: '0', REDIS_URL, REDIS_KEY_PREFIX },
    codes: 10_000,
    sameLookup: 'bare-redis',
    threshold: { rps: 0.85 },
    extras: ['bare-redis-no-timeout', 'bare-resolver'],
  },
  {
    key: 'postgres',
    title: 'Postgres only (no LRU, no serving store)',
    env: { RESOLVER_CACHE_MAX: '0', REDIS_URL: '' },
    codes: 100_000,
    sameLookup: 'bare-postgres',
    threshold: { rps: 0.85 },
    extras: ['bare-postgres-batched', 'bare-resolver'],
  },
];

/** The path named on the command line: lru, store (or serving_store), postgres. */
export function findPath(name: string): PathSpec {
  const key = name === 'store' ? 'serving_store' : name;
  const spec = PATHS.find((p) => p.key === key);
  if (!spec) throw new Error(`unknown path "${name}" (lru | store | postgres)`);
  return spec;
}

/** What each server is, for the report. */
export const CONTESTANT_TITLES: Record<ContestantName, string> = {
  ours: 'ours (main.ts)',
  'ours-b': 'ours B (main.ts of BENCH_OURS_B_ROOT)',
  'ours-x2': 'ours, WEB_CONCURRENCY=2 (two web processes, one port)',
  'bare-map': 'bare node:http + Map',
  'bare-redis': 'bare node:http + node-redis GET',
  'bare-redis-no-timeout': 'the same, node-redis per-command timeout off (as ours reads)',
  'bare-postgres': 'bare node:http + postgres.js select',
  'bare-postgres-batched': 'the same, queued lookups sent together as ours does (not the baseline)',
  'bare-resolver': 'bare node:http + OUR resolver (not a baseline)',
  'hono-only': 'main.ts without the fast path',
  nginx: 'nginx map + return 301 (ceiling)',
  'npm-start': 'npm start (embedded PGlite + Temporal)',
};

/** An environment without its empty values (empty means "unset" in PathSpec.env). */
export function withoutEmpty(e: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(e).filter(([, v]) => v !== ''));
}
