// The baseline of the Postgres-only path: node:http and one postgres.js primary-key select per request. It
// imports nothing of ours.
//
// Environment: DATABASE_URL, DATABASE_POOL_SIZE (as ours; default 10), PORT, HOST, REDIRECT_CACHE_CONTROL.
// At most DATABASE_POOL_SIZE queries are in flight; the rest wait here in arrival order. postgres.js 3.4.9 slows
// down the longer a process runs when more queries are queued inside it than it has connections
// (porsager/postgres#747; DESIGN.md measured a bare server falling from ~9.7k to ~5k req/s), so a server
// without this bound would measure the driver's trap, not a Postgres lookup.
// Answers an active link with the same bytes as main.ts (see bare_map_server.ts); otherwise a bare 404, a bare
// 503 when the query fails.
import { createServer } from 'node:http';
import postgres from 'postgres';

const env = process.env;
if (!env.DATABASE_URL) throw new Error('DATABASE_URL is required');
const poolSize = Number(env.DATABASE_POOL_SIZE || 10);
const cacheControl = env.REDIRECT_CACHE_CONTROL || 'private, max-age=90';
const sql = postgres(env.DATABASE_URL, {
  max: poolSize,
  connection: { application_name: 'bench-bare-postgres' },
});

let inFlight = 0;
const waiting: (() => void)[] = [];

/** The active link's target, with at most poolSize queries handed to postgres.js at once. */
async function selectTarget(code: string): Promise<string | undefined> {
  if (inFlight >= poolSize) await new Promise<void>((resume) => waiting.push(resume));
  else inFlight++;
  try {
    const rows = await sql<{ target_url: string }[]>`
      SELECT target_url FROM links WHERE code = ${code} AND status = 'active'`;
    return rows[0]?.target_url;
  } finally {
    // Hand the slot straight to the next waiter (inFlight stays), or free it.
    const next = waiting.shift();
    if (next) next();
    else inFlight--;
  }
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  selectTarget(url.slice(1, queryAt < 0 ? url.length : queryAt)).then(
    (target) => {
      if (target === undefined) res.writeHead(404);
      else
        res.writeHead(301, {
          'Cache-Control': cacheControl,
          'X-Robots-Tag': 'noindex',
          'Referrer-Policy': 'unsafe-url',
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
  void sql.end({ timeout: 1 });
});
