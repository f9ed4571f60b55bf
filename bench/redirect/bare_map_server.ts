// THE baseline of the LRU-hit path, and the server every figure of bench/redirect is a ratio against: node:http
// and a Map from code to the answer's headers, loaded once at start. It imports nothing of ours (DESIGN.md:
// "the simplest thing that does the job, in its own process, never our own code minus a part").
//
// Environment: BENCH_LINKS_FILE (one `code<TAB>target` per line; bench/redirect/run.ts writes it from the
// bench database), PORT, HOST, REDIRECT_CACHE_CONTROL (as ours; same default).
//
// It writes the same bytes as main.ts for an active link: `301`, Cache-Control, X-Robots-Tag, Referrer-Policy,
// Location in that order (node adds Date, Connection: keep-alive, Keep-Alive: timeout=65 and an empty chunked
// body, as it does for ours), and keeps idle connections 65 s as ours does. Anything else is a bare 404.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const env = process.env;
const linksFile = env.BENCH_LINKS_FILE;
if (!linksFile) throw new Error('BENCH_LINKS_FILE is required (one code<TAB>target per line)');
const cacheControl = env.REDIRECT_CACHE_CONTROL || 'private, max-age=90';

const answers = new Map<string, Record<string, string>>();
for (const line of readFileSync(linksFile, 'utf8').split('\n')) {
  const tab = line.indexOf('\t');
  if (tab <= 0) continue;
  answers.set(line.slice(0, tab), {
    'Cache-Control': cacheControl,
    'X-Robots-Tag': 'noindex',
    'Referrer-Policy': 'unsafe-url',
    Location: line.slice(tab + 1),
  });
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const answer = answers.get(url.slice(1, queryAt < 0 ? url.length : queryAt));
  if (answer) res.writeHead(301, answer);
  else res.writeHead(404);
  res.end();
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.listen(Number(env.PORT), env.HOST || '127.0.0.1', () => {
  process.stderr.write(`bare Map server: ${answers.size} links on ${env.HOST || '127.0.0.1'}:${env.PORT}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
