// The baseline of the Postgres-only path: node:http and one postgres.js primary-key select per request. It
// imports nothing of ours.
//
// Environment: DATABASE_URL, DATABASE_POOL_SIZE (as ours; default 10), PORT, HOST, REDIRECT_CACHE_CONTROL;
// BARE_POSTGRES_BATCH (default 1: one select per request, the baseline): with N > 1, lookups that wait for a
// connection are sent together, up to N in one `code = ANY(…)` select, as our resolver does (an extra line,
// "bare-postgres-batched": what the same trick gives a server with nothing else in it).
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

const batchMax = Math.max(1, Number(env.BARE_POSTGRES_BATCH || 1));

let inFlight = 0;
type Waiter = {
  code: string;
  resolve: (target: string | undefined) => void;
  reject: (error: unknown) => void;
};
const waiting: Waiter[] = [];

function selectOne(code: string) {
  return sql<
    { target_url: string }[]
  >`SELECT target_url FROM links WHERE code = ${code} AND status = 'active'`;
}

/** A slot's query settled: its slot takes the next waiter (or, batching, up to batchMax of them), or is freed. */
function next(): void {
  if (waiting.length === 0) {
    inFlight--;
    return;
  }
  const taken = batchMax === 1 ? undefined : waiting.splice(0, batchMax);
  if (taken === undefined || taken.length === 1) {
    const waiter = (taken ? taken[0] : waiting.shift()) as Waiter;
    selectOne(waiter.code).then(
      (rows) => {
        next();
        waiter.resolve(rows[0]?.target_url);
      },
      (error) => {
        next();
        waiter.reject(error);
      },
    );
    return;
  }
  const codes = taken.map((waiter) => waiter.code);
  sql<{ code: string; target_url: string }[]>`
    SELECT code, target_url FROM links WHERE code = ANY(${codes}) AND status = 'active'`.then(
    (rows) => {
      next();
      const byCode = new Map(rows.map((row) => [row.code, row.target_url]));
      for (const waiter of taken) waiter.resolve(byCode.get(waiter.code));
    },
    (error) => {
      next();
      for (const waiter of taken) waiter.reject(error);
    },
  );
}

/** The active link's target, with at most poolSize queries handed to postgres.js at once. */
function selectTarget(code: string): Promise<string | undefined> {
  if (inFlight >= poolSize) return new Promise((resolve, reject) => waiting.push({ code, resolve, reject }));
  inFlight++;
  return selectOne(code).then(
    (rows) => {
      next();
      return rows[0]?.target_url;
    },
    (error) => {
      next();
      throw error;
    },
  );
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
  void sql.end({ timeout: 1 });
});
