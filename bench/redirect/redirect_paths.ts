// The three redirect paths the bench measures, the environment that selects each in our server, and which bare
// server does the same lookup.
import { REDIS_KEY_PREFIX, REDIS_URL } from './bench_settings.ts';

export type PathKey = 'lru' | 'serving_store' | 'postgres' | 'lru_rules';

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
  /**
   * Every requested link has three routing rules (ADR 0080) for the path's rounds, and requests carry one of
   * BENCH_ACCEPT_LANGUAGES at random: ours then answers with `Vary` and a private Cache-Control, so its bytes
   * differ from the bare servers' by design.
   */
  rules?: { acceptLanguages: string[] };
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

/**
 * Paths measured only when named (BENCH_PATHS=lru_rules, or a mode's path argument): not part of the default
 * run, its bar or its history. `lru_rules` is the LRU path for links with three routing rules (a language, a
 * device and a country rule), to put a number on what rules cost beside the `lru` path of the same run; it has no
 * bar of its own (threshold 0).
 */
export const OPT_IN_PATHS: PathSpec[] = [
  {
    key: 'lru_rules',
    title: 'LRU hit, links with three routing rules',
    env: {
      REDIS_URL: '',
      RESOLVER_CACHE_MAX: '100000',
      RESOLVER_CACHE_TTL_MS: '3600000',
      TRUSTED_COUNTRY_HEADER: 'cf-ipcountry',
    },
    codes: 10_000,
    sameLookup: 'bare-map',
    threshold: { rps: 0 },
    extras: [],
    // Half Arabic readers (the language rule matches), the rest in three other forms (the default target).
    rules: { acceptLanguages: ['ar,en;q=0.8', 'ar-EG', 'en-US,en;q=0.9', 'fr-FR,fr;q=0.9,en;q=0.5'] },
  },
];

/** The path named on the command line: lru, store (or serving_store), postgres, lru_rules. */
export function findPath(name: string): PathSpec {
  const key = name === 'store' ? 'serving_store' : name;
  const spec = [...PATHS, ...OPT_IN_PATHS].find((p) => p.key === key);
  if (!spec) throw new Error(`unknown path "${name}" (lru | store | postgres | lru_rules)`);
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
