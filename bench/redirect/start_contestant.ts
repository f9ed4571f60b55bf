// Starts one named server for a path, each in its own process, with the environment that path gives it.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { LOOKUP_BATCH_MAX } from '../../lib/redirect/layered_resolver.ts';
import { BENCH_METRICS_TOKEN, type BenchServer, httpGet, startNodeServer } from './bench_server.ts';
import { NGINX, REDIS_KEY_PREFIX, REDIS_URL, say, sleep } from './bench_settings.ts';
import { hasNginx, startNginx } from './nginx_server.ts';
import { startNpmStart } from './npm_start_server.ts';
import { type ContestantName, type PathSpec, withoutEmpty } from './redirect_paths.ts';

/** `REDIRECT_CACHE_CONTROL`'s default (API.md); no server of the bench sets another. */
export const DEFAULT_CACHE_CONTROL = 'private, max-age=90';

export interface RunContext {
  dbName: string;
  databaseUrl: string;
  /** `code<TAB>target` of every active link (bare Map, nginx). */
  linksFile: string;
  /** A temp dir of this run (nginx prefix, npm start's data). */
  tmpDir: string;
  /** `compare` mode's other checkout, with a database and serving-store prefix of its own. */
  oursB?: { root: string; dbName: string; databaseUrl: string; redisKeyPrefix: string };
}

/**
 * Settings that make our servers start without generating (and printing) first-run credentials: values of
 * this run only, never logged.
 */
export const QUIET_BOOTSTRAP_ENV = {
  ADMIN_EMAIL: 'bench@example.test',
  ADMIN_PASSWORD: randomBytes(16).toString('hex'),
  BOOTSTRAP_API_KEY: `ll_bench_${randomBytes(24).toString('hex')}`,
  WORDPRESS_WEBHOOK_SECRET: randomBytes(24).toString('hex'),
};

/**
 * Waits until the gathered /metrics lists `count` web processes: the first redirect proves one listens, and wrk's
 * connections must be spread over all of them.
 */
async function waitForWebProcesses(server: BenchServer, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { body } = await httpGet(`${server.url}/metrics`, {
      Authorization: `Bearer ${BENCH_METRICS_TOKEN}`,
    }).catch(() => ({ body: '' }));
    const seen = new Set([...body.matchAll(/web_process="(\d+)"/g)].map((m) => m[1]));
    if (seen.size >= count) return;
    await sleep(200);
  }
  await server.stop();
  throw new Error(`${server.name}: ${count} web processes never all listened`);
}

/** `NAME=value` pairs, comma-separated (the experiment knobs below). */
function readEnvPairs(raw: string | undefined): Record<string, string> {
  return Object.fromEntries(
    (raw ?? '')
      .split(',')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1)]),
  );
}

/**
 * BENCH_OURS_ENV: added to our servers' environment, for experiments such as
 * `BENCH_OURS_ENV=CLICK_FLUSH_INTERVAL_MS=600000` (say so beside any figure it produced).
 */
export const OURS_EXTRA_ENV = readEnvPairs(process.env.BENCH_OURS_ENV);
/** BENCH_OURS_B_ENV: added to ours B only (compare mode), e.g. the same code with one setting changed. */
const OURS_B_EXTRA_ENV = readEnvPairs(process.env.BENCH_OURS_B_ENV);

/**
 * Starts `name` for `spec`; undefined when it cannot run on this machine (nginx not installed). `nodeArgs` go to
 * a single-process Node server (ours, the bare servers), e.g. `--cpu-prof` in the rest mode.
 */
export async function startContestant(
  name: ContestantName,
  spec: PathSpec,
  ctx: RunContext,
  nodeArgs: string[] = [],
): Promise<BenchServer | undefined> {
  const ourEnv = { ...withoutEmpty(spec.env), ...QUIET_BOOTSTRAP_ENV, ...OURS_EXTRA_ENV };
  const node = (entry: string, env: Record<string, string>, fillsCache: boolean, ours: boolean) =>
    startNodeServer({ name, entry, env, databaseUrl: ctx.databaseUrl, fillsCache, ours, nodeArgs });
  switch (name) {
    case 'ours':
      return node('main.ts', ourEnv, true, true);
    case 'ours-x2': {
      const server = await startNodeServer({
        name,
        entry: 'main.ts',
        env: { ...ourEnv, WEB_CONCURRENCY: '2' },
        databaseUrl: ctx.databaseUrl,
        fillsCache: true,
        ours: true,
        servedByChildren: true,
      });
      await waitForWebProcesses(server, 2);
      return server;
    }
    case 'ours-b': {
      const b = ctx.oursB;
      if (!b) throw new Error('ours-b needs BENCH_OURS_B_ROOT');
      return startNodeServer({
        name,
        entry: 'main.ts',
        root: b.root,
        databaseUrl: b.databaseUrl,
        env: {
          ...ourEnv,
          ...(spec.env.REDIS_URL ? { REDIS_KEY_PREFIX: b.redisKeyPrefix } : {}),
          ...OURS_B_EXTRA_ENV,
        },
        fillsCache: true,
        ours: true,
      });
    }
    case 'bare-map':
      return node('bench/redirect/bare_map_server.ts', { BENCH_LINKS_FILE: ctx.linksFile }, false, false);
    case 'bare-redis':
      return node('bench/redirect/bare_redis_server.ts', { REDIS_URL, REDIS_KEY_PREFIX }, false, false);
    case 'bare-redis-no-timeout':
      // The same bare server with node-redis's default per-command timeout off, as ours reads (an extra line:
      // the baseline itself stays the simplest thing, the client's defaults).
      return node(
        'bench/redirect/bare_redis_server.ts',
        { REDIS_URL, REDIS_KEY_PREFIX, BARE_REDIS_COMMAND_TIMEOUT: '0' },
        false,
        false,
      );
    case 'bare-postgres':
      return node('bench/redirect/bare_postgres_server.ts', {}, false, false);
    case 'bare-postgres-batched':
      // The same bare server sending the lookups that wait for a connection together, as our resolver does (an
      // extra line: the baseline stays one select per request, the simplest thing).
      return node(
        'bench/redirect/bare_postgres_server.ts',
        { BARE_POSTGRES_BATCH: String(LOOKUP_BATCH_MAX) },
        false,
        false,
      );
    case 'bare-resolver':
      return node('bench/redirect/bare_server.ts', ourEnv, true, false);
    case 'hono-only':
      return node('bench/redirect/hono_only_server.ts', ourEnv, true, true);
    case 'nginx':
      if (!hasNginx()) {
        say(
          `SKIPPING nginx: ${NGINX} is not installed (apt-get install -y nginx-light; .ci/run installs it)`,
        );
        return undefined;
      }
      return startNginx({
        dir: join(ctx.tmpDir, 'nginx'),
        linksFile: ctx.linksFile,
        cacheControl: DEFAULT_CACHE_CONTROL,
      });
    case 'npm-start':
      return startNpmStart({
        dataDir: join(ctx.tmpDir, 'npm-start-data'),
        env: withoutEmpty(spec.env),
        codes: spec.codes,
      });
  }
}
