// The baseline of the serving-store path: node:http and one node-redis GET per request, reading the record our
// serving store writes (key `{REDIS_KEY_PREFIX}link:{code}`, value `{version}|[url, status, safety, ...]`; the
// format is restated here from lib/serving/serving_store.ts, not imported). It imports nothing of ours.
//
// Environment: REDIS_URL, REDIS_KEY_PREFIX (as ours; same default), PORT, HOST, REDIRECT_CACHE_CONTROL.
// Answers an active link with the same bytes as main.ts (see bare_map_server.ts); a missing or inactive record
// is a bare 404, a Redis error a bare 503 (ours would fall through to Postgres; the bench never makes it fail).
import { createServer } from 'node:http';
import { createClient } from '@redis/client';

const env = process.env;
if (!env.REDIS_URL) throw new Error('REDIS_URL is required');
const keyPrefix = `${env.REDIS_KEY_PREFIX ?? 'lifeline:'}link:`;
const cacheControl = env.REDIRECT_CACHE_CONTROL || 'private, max-age=90';

// BARE_REDIS_COMMAND_TIMEOUT=0: node-redis's default 5 s per-command timeout off (the bench's extra line
// bare-redis-no-timeout); unset, the client's defaults, the simplest thing.
const redis = createClient({
  url: env.REDIS_URL,
  ...(env.BARE_REDIS_COMMAND_TIMEOUT === undefined
    ? {}
    : { commandOptions: { timeout: Number(env.BARE_REDIS_COMMAND_TIMEOUT) } }),
});
redis.on('error', (error: Error) => process.stderr.write(`bare Redis server: ${error.message}\n`));
await redis.connect();

/** The target of an active link's stored record, or undefined. */
function readActiveTarget(raw: string | null): string | undefined {
  if (raw === null) return undefined;
  const fields = JSON.parse(raw.slice(raw.indexOf('|') + 1)) as unknown[];
  return fields[1] === 'active' && typeof fields[0] === 'string' ? fields[0] : undefined;
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const code = url.slice(1, queryAt < 0 ? url.length : queryAt);
  redis.get(keyPrefix + code).then(
    (raw) => {
      const target = readActiveTarget(raw);
      if (target === undefined) res.writeHead(404);
      else
        res.writeHead(301, {
          'Cache-Control': cacheControl,
          'X-Robots-Tag': 'noindex',
          'Referrer-Policy': 'strict-origin-when-cross-origin',
          Location: target,
        });
      res.end();
    },
    () => {
      res.writeHead(503);
      res.end();
    },
  );
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.listen(Number(env.PORT), env.HOST || '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void redis.quit().catch(() => {});
});
