// An extra line of bench/redirect, NOT the baseline: a bare node:http server that resolves codes through OUR
// resolver (the one createWebDeps builds from the same environment: same ladder, same pool size, a promise per
// request) and writes a 301 with the target as Location (404 when unknown). It shows what our resolver costs
// on its own; the baselines every figure is a ratio against are bare_map_server.ts (and, per path,
// bare_redis_server.ts and bare_postgres_server.ts), which import nothing of ours. Reported as "bare-resolver".
import { createServer } from 'node:http';
import { parseConfig } from '../../lib/shared/config.ts';
import { createLogger } from '../../lib/shared/logger.ts';
import { createSql } from '../../lib/stores/sql.ts';
import { createWebDeps } from '../../server/web_deps.ts';

const config = parseConfig(process.env);
if (!config.databaseUrl) throw new Error('DATABASE_URL is required');
const logger = createLogger({ level: config.logLevel, name: 'bench-bare' });
const sql = createSql({
  url: config.databaseUrl,
  max: config.databasePoolSize,
  applicationName: 'bench-bare',
});
const { resolver } = await createWebDeps(config, { sql, logger });
const CACHE_CONTROL = config.redirect.cacheControl;

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const code = url.slice(1, queryAt < 0 ? url.length : queryAt);
  resolver.resolve(code).then(
    (record) => {
      if (record) {
        // The same response bytes as ours for an active link (status, Location and the fixed headers), so the
        // ratio measures the product's work (policy, clicks, metrics, routing), not a shorter answer.
        res.writeHead(301, {
          'Cache-Control': CACHE_CONTROL,
          'X-Robots-Tag': 'noindex',
          'Referrer-Policy': 'unsafe-url',
          Location: record.url,
        });
        res.end();
      } else {
        res.writeHead(404);
        res.end();
      }
    },
    () => {
      res.writeHead(500);
      res.end();
    },
  );
});
server.keepAliveTimeout = 65_000;
server.listen(config.port, config.host, () => {
  process.stderr.write(`bare server listening on ${config.host}:${config.port}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void sql.end({ timeout: 1 }).then(() => process.exit(0));
});
