// The redirect benchmark's knobs (environment, read once) and fixed names. bench/redirect/run.ts lists them for
// people; this file is where they are read.
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/temporal_cli.ts';

const env = process.env;

/** A knob that must be a positive number; a typo fails at once instead of running a 0-second benchmark. */
function readPositive(name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, not "${raw}"`);
  return value;
}

export { ROOT };
export const ROUNDS = readPositive('BENCH_ROUNDS', 4);
export const ROUND_SECONDS = readPositive('BENCH_ROUND_SECONDS', 20);
/** `rest` mode: idle seconds between its load windows. */
export const REST_SECONDS = readPositive('BENCH_REST_SECONDS', 60);
export const CONNECTIONS = readPositive('BENCH_CONNECTIONS', 50);
/**
 * BENCH_QUIET_SECONDS: before each round, wait up to this long for the machine to go quiet (the work a previous
 * round left behind — click flushes, npm start's PGlite writing them, autovacuum — not billed to the next server).
 */
export const QUIET_SECONDS = readPositive('BENCH_QUIET_SECONDS', 20);
export const MEMORY_SECONDS = readPositive('BENCH_MEMORY_SECONDS', 240);
/**
 * Which form of our server the memory run starts: `built` (default: dist/web.mjs after `npm run build`, Node alone,
 * as the image and `npm run start:web` run it) or `source` (main.ts through tsx, as `npm run web`).
 */
export const MEMORY_FORM: 'built' | 'source' = env.BENCH_MEMORY_FORM === 'source' ? 'source' : 'built';
/** Extra environment of the memory run's server, `NAME=value` words (e.g. `RESOLVER_CACHE_MAX_BYTES=0`). */
export const MEMORY_SERVER_ENV: Record<string, string> = Object.fromEntries(
  (env.BENCH_MEMORY_SERVER_ENV ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
);
/** Seconds of ours alone per path in `long` mode. */
export const LONG_SECONDS = readPositive('BENCH_LONG_SECONDS', 600);
/**
 * Codes requested in `long` mode instead of the path's own number (e.g. 100000 on the LRU path: every seeded
 * link, all held by its 100,000-entry LRU, so each flush interval carries up to 100,000 click keys).
 */
export const LONG_CODES = env.BENCH_LONG_CODES ? readPositive('BENCH_LONG_CODES', 10_000) : undefined;
/** Length of one throughput/RSS sample in `long` mode ("per minute"); shorter only for smoke runs. */
export const LONG_SAMPLE_SECONDS = readPositive('BENCH_LONG_SAMPLE_SECONDS', 60);
/** Caps the in-order warm-up pass (default: long enough to request every code at least once). */
export const WARMUP_SECONDS = env.BENCH_WARMUP_SECONDS ? readPositive('BENCH_WARMUP_SECONDS', 3) : undefined;
/** Seconds `npm start` may take to finish its new links' sync workflows (measured: about 5 minutes here). */
export const NPM_START_SETTLE_SECONDS = readPositive('BENCH_NPM_START_SETTLE_SECONDS', 900);
/** BENCH_NPM_START=0 leaves the `npm start` row out (it starts a Temporal dev server and PGlite). */
export const WITH_NPM_START = env.BENCH_NPM_START !== '0';
/** BENCH_NGINX: the nginx binary (Debian's nginx-light installs /usr/sbin/nginx). */
export const NGINX = env.BENCH_NGINX ?? '/usr/sbin/nginx';
/** BENCH_NO_DOC=1: print the generated sections to stdout only; docs/BENCHMARKS.md is left alone. */
export const NO_DOC = env.BENCH_NO_DOC === '1';
/** Reuse the bench database when it already holds the mode's links, and leave it in place at the end. */
export const KEEP_DATABASE = env.BENCH_KEEP_DATABASE === '1';
/** `compare` mode: the root of another checkout whose main.ts (with its own node_modules) is "B". */
export const OURS_B_ROOT = env.BENCH_OURS_B_ROOT;
export const ADMIN_URL =
  env.BENCH_ADMIN_URL ??
  env.LIFELINE_TEST_POSTGRES_ADMIN_URL ??
  `postgres://${userInfo().username}@127.0.0.1:5432/postgres`;
/** A database index of its own, so the shared db 0 is untouched; keys are also prefixed (REDIS_KEY_PREFIX). */
export const REDIS_URL = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/7';
export const REDIS_KEY_PREFIX = 'lifeline-bench:';
/**
 * BENCH_ARCHIVE_DATABASE: run against an existing database (a large archive made by bench/seed_links.ts) instead of
 * a fresh `lifeline_bench`: the bench's 100,000 `bk` links are added to it if missing, and it is never dropped. For
 * the Postgres path at ten million links (`paths` mode with BENCH_PATHS=postgres).
 */
export const ARCHIVE_DATABASE = env.BENCH_ARCHIVE_DATABASE;
export const DB_NAME = ARCHIVE_DATABASE ?? 'lifeline_bench';
/** Codes are `<prefix><n>`, n from 1. */
export const CODE_PREFIX = 'bk';
export const LUA = join(ROOT, 'bench/redirect/random_codes.lua');
export const DOC = join(ROOT, 'docs/BENCHMARKS.md');
/**
 * What wrk sends as User-Agent: a current desktop Chrome, so our server counts every request as a human click
 * (no User-Agent would count as a bot), as a reader's browser would be counted.
 */
export const BROWSER_USER_AGENT =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36';

/** The URL of one of the bench's databases on the admin URL's server. */
export function toDatabaseUrl(dbName: string): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${dbName}`;
  return u.toString();
}

export const DATABASE_URL = toDatabaseUrl(DB_NAME);

/** The target every seeded code redirects to (the same in Postgres, the serving store, the Map and nginx). */
export function toTargetUrl(n: number): string {
  return `https://news.example.com/2026/11/21/story-${n}?ref=bench`;
}

export const say = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
