// Redirect benchmark (issue 4): our server (the production entry, main.ts) against a bare node:http server
// doing the same lookup (bench/redirect/bare_server.ts), alternated round by round on loopback with wrk.
//
//   npm run bench:redirect                 three paths (LRU hit, serving-store hit, Postgres only) + stampede
//   npm run bench:redirect -- memory       1,000,000 links, random codes for minutes, RSS every 10 s
//   npm run bench:redirect -- stampede     only the stampede check
//   npm run bench:redirect -- paths        only the three paths
//   npm run bench:redirect -- profile [bare]  our (or the bare) server under the LRU-hit load, --cpu-prof
//
// Knobs (environment): BENCH_ROUNDS (4), BENCH_ROUND_SECONDS (20), BENCH_CONNECTIONS (50),
// BENCH_MEMORY_SECONDS (240), BENCH_ADMIN_URL (Postgres admin URL; default as the tests' harness),
// BENCH_REDIS_URL (redis://127.0.0.1:6379/7: a database index of its own, so the shared db 0 is untouched;
// keys are also prefixed lifeline-bench: and deleted at the end by SCAN, never FLUSHDB).
//
// It creates (and at the end drops) its own database, lifeline_bench, migrated with lib/stores/migrate.ts, and
// rewrites the generated sections of docs/BENCHMARKS.md (between <!-- bench:NAME --> markers).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { cpus, loadavg, totalmem, userInfo } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { createClient } from 'redis';
import { migrateDatabase } from '../../lib/stores/migrate.ts';
import { getFreePort } from '../../scripts/dev_server.ts';
import { ROOT } from '../../scripts/temporal_cli.ts';

const say = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const env = process.env;
const ROUNDS = Number(env.BENCH_ROUNDS ?? 4);
const ROUND_SECONDS = Number(env.BENCH_ROUND_SECONDS ?? 20);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 50);
const MEMORY_SECONDS = Number(env.BENCH_MEMORY_SECONDS ?? 240);
const ADMIN_URL =
  env.BENCH_ADMIN_URL ??
  env.LIFELINE_TEST_POSTGRES_ADMIN_URL ??
  `postgres://${userInfo().username}@127.0.0.1:5432/postgres`;
const REDIS_URL = env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/7';
const REDIS_KEY_PREFIX = 'lifeline-bench:';
const DB_NAME = 'lifeline_bench';
const CODE_PREFIX = 'bk';
const LUA = join(ROOT, 'bench/redirect/random_codes.lua');
const DOC = join(ROOT, 'docs/BENCHMARKS.md');

const databaseUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${DB_NAME}`;
  return u.toString();
})();

// ---------------------------------------------------------------------------------------------- database

async function createBenchDatabase(links: number): Promise<void> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
  await admin.unsafe(`CREATE DATABASE ${DB_NAME}`);
  await admin.end();
  await migrateDatabase(databaseUrl);
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const started = Date.now();
  // Batches of 100k keep each transaction (and the trigram GIN indexes' pending lists) reasonable.
  for (let from = 1; from <= links; from += 100_000) {
    const to = Math.min(links, from + 99_999);
    await sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner)
      SELECT ${CODE_PREFIX} || i, 'https://news.example.com/2026/11/21/story-' || i || '?ref=bench',
             'active', 'clean', 'import', 'bench'
      FROM generate_series(${from}::int, ${to}::int) AS i`;
  }
  await sql`VACUUM ANALYZE links`;
  await sql.end();
  say(`seeded ${links.toLocaleString('en')} links in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function dropBenchDatabase(): Promise<void> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
  await admin.end();
}

/** Deletes our keys (and only ours) from the bench's Redis database. */
async function clearBenchRedis(): Promise<void> {
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  let deleted = 0;
  for await (const keys of client.scanIterator({ MATCH: `${REDIS_KEY_PREFIX}*`, COUNT: 1000 })) {
    if (keys.length > 0) deleted += await client.del(keys);
  }
  await client.quit();
  if (deleted > 0) say(`deleted ${deleted} bench keys from ${REDIS_URL}`);
}

// ----------------------------------------------------------------------------------------------- servers

interface Server {
  name: string;
  child: ChildProcess;
  port: number;
  url: string;
}

async function startServer(
  name: string,
  entry: string,
  extraEnv: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<Server> {
  const port = await getFreePort();
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', entry], {
    cwd: ROOT,
    env: {
      PATH: env.PATH ?? '',
      HOME: env.HOME ?? '',
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      SHUTDOWN_DELAY_MS: '0',
      // Nothing in the bench talks to Temporal; a closed port keeps the lazy clients from finding a real one.
      TEMPORAL_ADDRESS: '127.0.0.1:9',
      ADMIN_EMAIL: 'bench@example.test',
      ADMIN_PASSWORD: 'bench bench bench',
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const server = { name, child, port, url: `http://127.0.0.1:${port}` };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${stderr}`);
    const status = await get(`${server.url}/${CODE_PREFIX}1`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 301) return server;
    await sleep(200);
  }
  child.kill('SIGKILL');
  throw new Error(`${name} did not answer a redirect within 60 s: ${stderr}`);
}

async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kib / 1024) * 10) / 10;
}

/**
 * Context switches of the process's main thread (the event loop): `slept` when it waited for work (epoll),
 * `preempted` when the scheduler took the CPU away (e.g. to run the woken load generator on the same core).
 */
function switches(pid: number): { slept: number; preempted: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    slept: Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0),
    preempted: Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0),
  };
}

/** CPU time the process has used in user space and in the kernel (socket calls), in microseconds. */
function cpuSplitMicros(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(5_000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** lifeline_link_lookups_total by "layer/result", from our /metrics. */
async function lookups(server: Server): Promise<Record<string, number>> {
  const { body } = await get(`${server.url}/metrics`);
  const out: Record<string, number> = {};
  for (const m of body.matchAll(/^lifeline_link_lookups_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    out[`${labels.layer}/${labels.result}`] = Number(m[2]);
  }
  return out;
}

function diff(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}

// ------------------------------------------------------------------------------------------------- wrk

interface WrkResult {
  requests: number;
  duration_us: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  max_us: number;
  mean_us: number;
  non_3xx: number;
  connect_errors: number;
  read_errors: number;
  write_errors: number;
  timeouts: number;
}

function wrk(
  url: string,
  seconds: number,
  options: { codes: number; order: 'random' | 'seq'; connections?: number },
): Promise<WrkResult & { rps: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'wrk',
      [
        '-t1',
        `-c${options.connections ?? CONNECTIONS}`,
        `-d${seconds}s`,
        '--timeout',
        '5s',
        '-s',
        LUA,
        `${url}/`,
      ],
      {
        env: {
          PATH: env.PATH ?? '',
          BENCH_PREFIX: CODE_PREFIX,
          BENCH_CODES: String(options.codes),
          BENCH_ORDER: options.order,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = /BENCH_RESULT (\{.*\})/.exec(out)?.[1];
      if (code !== 0 || !line) return reject(new Error(`wrk failed (${code}): ${out}`));
      const r = JSON.parse(line) as WrkResult;
      resolve({ ...r, rps: r.requests / (r.duration_us / 1e6) });
    });
  });
}

// ----------------------------------------------------------------------------------------------- paths

interface PathSpec {
  key: string;
  title: string;
  /** Environment for both servers. */
  env: Record<string, string>;
  codes: number;
  threshold: { rps: number; p99?: number };
  /** Also measure main.ts without the Node fast path (bench/redirect/hono_only_server.ts). */
  honoOnly?: boolean;
}

const PATHS: PathSpec[] = [
  {
    key: 'lru',
    title: 'LRU hit',
    // Entries live 10 minutes here so every measured request is a hit (the default TTL is 60 s).
    env: { REDIS_URL: '', RESOLVER_CACHE_MAX: '100000', RESOLVER_CACHE_TTL_MS: '600000' },
    codes: 10_000,
    threshold: { rps: 0.8, p99: 1.5 },
    honoOnly: true,
  },
  {
    key: 'serving_store',
    title: 'Serving-store hit (LRU off)',
    env: { RESOLVER_CACHE_MAX: '0', REDIS_URL, REDIS_KEY_PREFIX },
    codes: 10_000,
    threshold: { rps: 0.75 },
  },
  {
    key: 'postgres',
    title: 'Postgres only (no LRU, no serving store)',
    env: { RESOLVER_CACHE_MAX: '0', REDIS_URL: '' },
    codes: 100_000,
    threshold: { rps: 0.75 },
  },
];

type ServerName = 'ours' | 'bare' | 'hono-only';

interface RoundResult {
  server: ServerName;
  round: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  rss?: number;
  /** Server CPU (user + system) per request, µs: what decides throughput when the CPU is the limit. */
  cpuPerRequest: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const ms = (us: number) => (us / 1000).toFixed(2);

function withoutEmpty(e: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(e).filter(([, v]) => v !== ''));
}

async function benchPath(spec: PathSpec) {
  say(`— ${spec.title}: starting both servers`);
  const serverEnv = withoutEmpty(spec.env);
  const ours = await startServer('ours', 'main.ts', serverEnv);
  const bare = await startServer('bare', 'bench/redirect/bare_server.ts', serverEnv);
  const hono = spec.honoOnly
    ? await startServer('hono-only', 'bench/redirect/hono_only_server.ts', serverEnv)
    : undefined;
  const servers = [ours, bare, ...(hono ? [hono] : [])];
  try {
    // Warm-up: every code once (fills the LRU or the serving store), then a short random burst for the JIT.
    for (const s of servers) {
      await wrk(s.url, Math.max(3, Math.ceil(spec.codes / 2000)), { codes: spec.codes, order: 'seq' });
      await sleep(500);
      await wrk(s.url, 3, { codes: spec.codes, order: 'random' });
    }
    const before = await lookups(ours);
    const rounds: RoundResult[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Rotate which server goes first, so none always follows another's garbage or cache state.
      const order = servers.map((_, i) => servers[(i + round - 1) % servers.length]!);
      for (const s of order) {
        const cpuBefore = cpuSplitMicros(s.child.pid!);
        const switchesBefore = switches(s.child.pid!);
        const r = await wrk(s.url, ROUND_SECONDS, { codes: spec.codes, order: 'random' });
        const cpuAfter = cpuSplitMicros(s.child.pid!);
        const switchesAfter = switches(s.child.pid!);
        const perK = (n: number) => ((n * 1000) / r.requests).toFixed(1);
        const userPerRequest = (cpuAfter.user - cpuBefore.user) / r.requests;
        const systemPerRequest = (cpuAfter.system - cpuBefore.system) / r.requests;
        const cpuPerRequest = userPerRequest + systemPerRequest;
        const result: RoundResult = {
          cpuPerRequest,
          server: s.name as ServerName,
          round,
          rps: r.rps,
          p50: r.p50_us,
          p99: r.p99_us,
          errors: r.non_3xx + r.connect_errors + r.read_errors + r.write_errors + r.timeouts,
          rss: rssMiB(s.child.pid!),
        };
        rounds.push(result);
        say(
          `${spec.key} round ${round} ${result.server}: ${Math.round(r.rps)} req/s, p50 ${ms(r.p50_us)} ms, ` +
            `p99 ${ms(r.p99_us)} ms, CPU ${cpuPerRequest.toFixed(1)} µs/req ` +
            `(user ${userPerRequest.toFixed(1)}, kernel ${systemPerRequest.toFixed(1)}), switches per 1k req: ` +
            `slept ${perK(switchesAfter.slept - switchesBefore.slept)}, ` +
            `preempted ${perK(switchesAfter.preempted - switchesBefore.preempted)}, errors ${result.errors}` +
            `${result.rss ? `, RSS ${result.rss} MiB` : ''}`,
        );
      }
    }
    const layers = diff(await lookups(ours), before);
    const pick = (who: ServerName) => rounds.filter((r) => r.server === who);
    const summary = (who: ServerName) => ({
      rps: median(pick(who).map((r) => r.rps)),
      p50: median(pick(who).map((r) => r.p50)),
      p99: median(pick(who).map((r) => r.p99)),
      errors: pick(who).reduce((n, r) => n + r.errors, 0),
      cpu: median(pick(who).map((r) => r.cpuPerRequest)),
    });
    const o = summary('ours');
    const b = summary('bare');
    const h = hono ? summary('hono-only') : undefined;
    const rpsRatio = o.rps / b.rps;
    const p99Ratio = o.p99 / b.p99;
    const pass =
      rpsRatio >= spec.threshold.rps &&
      (spec.threshold.p99 === undefined || p99Ratio <= spec.threshold.p99) &&
      o.errors === 0 &&
      b.errors === 0;
    return {
      spec,
      rounds,
      ours: o,
      bare: b,
      honoOnly: h,
      rpsRatio,
      p99Ratio,
      pass,
      layers,
      rss: Math.max(...pick('ours').map((r) => r.rss ?? 0)),
      bareRss: Math.max(...pick('bare').map((r) => r.rss ?? 0)),
    };
  } finally {
    for (const s of servers) await stopServer(s);
  }
}

// -------------------------------------------------------------------------------------------- stampede

/** Opens `n` sockets, then sends one GET for `path` on each in the same tick; returns the status codes. */
async function concurrentGets(port: number, path: string, n: number): Promise<number[]> {
  const sockets: Socket[] = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const s = connect(port, '127.0.0.1', () => resolve(s));
          s.once('error', reject);
        }),
    ),
  );
  const answers = sockets.map(
    (s) =>
      new Promise<number>((resolve) => {
        let text = '';
        s.on('data', (c: Buffer) => {
          text += c.toString('latin1');
        });
        s.on('close', () => resolve(Number(text.slice(9, 12)) || 0));
        s.on('error', () => resolve(0));
      }),
  );
  const req = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
  for (const s of sockets) s.write(req);
  return Promise.all(answers);
}

async function benchStampede() {
  say('— stampede: 1,000 concurrent requests for one uncached code (LRU on, serving store on)');
  const code = `stampede${Date.now().toString(36)}`;
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  await sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    VALUES (${code}, 'https://news.example.com/stampede', 'active', 'clean', 'import', 'bench')`;
  await sql.end();
  const ours = await startServer('ours', 'main.ts', { REDIS_URL, REDIS_KEY_PREFIX });
  try {
    const before = await lookups(ours);
    const statuses = await concurrentGets(ours.port, `/${code}`, 1000);
    await sleep(300);
    const layers = diff(await lookups(ours), before);
    const postgresQueries = Object.entries(layers)
      .filter(([k]) => k.startsWith('postgres/'))
      .reduce((n, [, v]) => n + v, 0);
    const redirected = statuses.filter((s) => s === 301).length;
    say(
      `stampede: ${redirected}/1000 answered 301; Postgres lookups ${postgresQueries}; ${JSON.stringify(layers)}`,
    );
    return { code, redirected, postgresQueries, layers, pass: postgresQueries === 1 && redirected === 1000 };
  } finally {
    await stopServer(ours);
  }
}

// ---------------------------------------------------------------------------------------------- memory

/** V8 heap used and reserved (MiB), from the server's default process metrics: what of the RSS is live JS data. */
async function heapMiB(server: Server): Promise<{ used: number; total: number }> {
  const { body } = await get(`${server.url}/metrics`);
  const read = (name: string) => {
    const m = new RegExp(`^nodejs_heap_size_${name}_bytes (\\S+)$`, 'm').exec(body);
    return m ? Math.round((Number(m[1]) / 1048576) * 10) / 10 : Number.NaN;
  };
  return { used: read('used'), total: read('total') };
}

async function benchMemory(links: number) {
  say(`— memory: ${links.toLocaleString('en')} links, random codes for ${MEMORY_SECONDS} s, RSS every 10 s`);
  // BENCH_SERVER_NODE_OPTIONS (e.g. --max-old-space-size=256): what a deployment that caps the heap would see.
  const nodeOptions = env.BENCH_SERVER_NODE_OPTIONS;
  const ours = await startServer('ours', 'main.ts', nodeOptions ? { NODE_OPTIONS: nodeOptions } : {});
  type Sample = { t: number; rss: number; heapUsed: number; heapTotal: number };
  const series: Sample[] = [];
  const started = Date.now();
  const sample = async () => {
    const heap = await heapMiB(ours);
    series.push({
      t: Math.round((Date.now() - started) / 1000),
      rss: rssMiB(ours.child.pid!),
      heapUsed: heap.used,
      heapTotal: heap.total,
    });
  };
  try {
    await sample();
    const pending: Promise<void>[] = [];
    const sampler = setInterval(() => pending.push(sample()), 10_000);
    const r = await wrk(ours.url, MEMORY_SECONDS, { codes: links, order: 'random' });
    clearInterval(sampler);
    await Promise.all(pending);
    await sample();
    const layers = await lookups(ours);
    const errors = r.non_3xx + r.connect_errors + r.read_errors + r.write_errors + r.timeouts;
    say(`memory: ${Math.round(r.rps)} req/s, ${r.requests} requests, errors ${errors}`);
    series.sort((a, b) => a.t - b.t);
    return { links, series, requests: r.requests, rps: r.rps, errors, layers };
  } finally {
    await stopServer(ours);
  }
}

// --------------------------------------------------------------------------------------------- profile

/**
 * A server under the LRU-hit load with `node --cpu-prof`; the profile lands in .cache/cpu-profiles/<which>/.
 * With BENCH_PROFILER=perf, Linux `perf record` samples the whole process instead (native code, the kernel's
 * socket work and GC included; JS frames named through --perf-basic-prof): .cache/cpu-profiles/<which>/perf.data,
 * read with `perf report -i <file> --no-children --sort sym`.
 */
async function profileLru(which: string): Promise<string> {
  const spec = PATHS[0]!;
  const dir = join(ROOT, '.cache/cpu-profiles', which);
  mkdirSync(dir, { recursive: true });
  const usePerf = env.BENCH_PROFILER === 'perf';
  const entry = which === 'bare' ? 'bench/redirect/bare_server.ts' : 'main.ts';
  const ours = await startServer(
    which,
    entry,
    withoutEmpty(spec.env),
    usePerf ? ['--perf-basic-prof'] : ['--cpu-prof', `--cpu-prof-dir=${dir}`],
  );
  try {
    const warm = await wrk(ours.url, 5, { codes: spec.codes, order: 'seq' });
    const perf = usePerf
      ? spawn(
          'perf',
          [
            'record',
            '-F',
            '499',
            '-g',
            '-p',
            String(ours.child.pid),
            '-o',
            join(dir, 'perf.data'),
            '--',
            'sleep',
            String(ROUND_SECONDS),
          ],
          { stdio: 'ignore' },
        )
      : undefined;
    const r = await wrk(ours.url, ROUND_SECONDS, { codes: spec.codes, order: 'random' });
    if (perf && perf.exitCode === null) await new Promise((resolve) => perf.once('exit', resolve));
    say(
      `profile: ${Math.round(r.rps)} req/s under ${usePerf ? 'perf' : '--cpu-prof'}; ` +
        `${warm.requests + r.requests} requests in all (divide the profile by this to compare per request)`,
    );
  } finally {
    await stopServer(ours);
  }
  return dir;
}

// ---------------------------------------------------------------------------------------------- report

function machine(): string {
  let wrkVersion = 'wrk';
  try {
    wrkVersion = execFileSync('wrk', ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch (error) {
    wrkVersion =
      String((error as { stdout?: string }).stdout ?? '')
        .split('\n')[0]!
        .trim() || 'wrk';
  }
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {}
  return [
    `- Date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; commit ${commit}`,
    `- Machine: nproc ${cpus().length} (${cpus()[0]?.model ?? 'unknown CPU'}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM; ` +
      `Node ${process.version}; ${wrkVersion.replace(/ Copyright.*/, '')}`,
    `- Machine load average when written (1/5/15 min; the 2 cores are shared with other work): ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' / ')}`,
    `- Load: wrk -t1 -c${CONNECTIONS}, keep-alive, random codes (Lua), loopback; ` +
      `${ROUNDS} rounds × ${ROUND_SECONDS} s per server per path, alternated; medians over rounds.`,
  ].join('\n');
}

function pathsSection(results: Awaited<ReturnType<typeof benchPath>>[]): string {
  const lines = [
    machine(),
    '',
    '| Path | Ours req/s | Bare req/s | Ratio | Ours p50 / p99 (ms) | Bare p50 / p99 (ms) | p99 ratio | CPU µs/req ours / bare | Ours RSS | Bare RSS | Threshold | Result |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of results) {
    const t = r.spec.threshold;
    lines.push(
      `| ${r.spec.title} | ${Math.round(r.ours.rps)} | ${Math.round(r.bare.rps)} | ${(r.rpsRatio * 100).toFixed(1)}% | ` +
        `${ms(r.ours.p50)} / ${ms(r.ours.p99)} | ${ms(r.bare.p50)} / ${ms(r.bare.p99)} | ${r.p99Ratio.toFixed(2)}× | ` +
        `${r.ours.cpu.toFixed(1)} / ${r.bare.cpu.toFixed(1)} | ${r.rss} MiB | ${r.bareRss} MiB | ≥${t.rps * 100}%${t.p99 ? `, p99 ≤${t.p99}×` : ''} | ${r.pass ? 'PASS' : 'FAIL'} |`,
    );
  }
  lines.push(
    '',
    'Where our lookups were answered during the measured rounds (lifeline_link_lookups_total deltas):',
    '',
  );
  for (const r of results) lines.push(`- ${r.spec.title}: \`${JSON.stringify(r.layers)}\``);
  lines.push(
    '',
    '<details><summary>Every round</summary>',
    '',
    '| Path | Round | Server | req/s | p50 ms | p99 ms | CPU µs/req | errors | RSS MiB |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of results) {
    for (const x of r.rounds) {
      lines.push(
        `| ${r.spec.key} | ${x.round} | ${x.server} | ${Math.round(x.rps)} | ${ms(x.p50)} | ${ms(x.p99)} | ${x.cpuPerRequest.toFixed(1)} | ${x.errors} | ${x.rss ?? ''} |`,
      );
    }
  }
  lines.push('', '</details>');
  return lines.join('\n');
}

function stampedeSection(r: Awaited<ReturnType<typeof benchStampede>>): string {
  return [
    `- Date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}`,
    `- 1,000 sockets opened first, then one \`GET /${r.code}\` written on each in the same tick (code never requested before; LRU and serving store on).`,
    `- Answered 301: ${r.redirected} / 1000. Postgres lookups (lifeline_link_lookups_total{layer="postgres"} delta): **${r.postgresQueries}**.`,
    `- All lookup counters that moved: \`${JSON.stringify(r.layers)}\``,
    `- Result: ${r.pass ? 'PASS (one Postgres query)' : 'FAIL (expected exactly one Postgres query and 1000 redirects)'}`,
  ].join('\n');
}

function memorySection(r: Awaited<ReturnType<typeof benchMemory>>): string {
  const peak = Math.max(...r.series.map((s) => s.rss));
  const tail = r.series.slice(-Math.max(3, Math.floor(r.series.length / 3)));
  const tailSpread = Math.max(...tail.map((s) => s.rss)) - Math.min(...tail.map((s) => s.rss));
  return [
    machine().split('\n').slice(0, 2).join('\n'),
    `- ${r.links.toLocaleString('en')} links in Postgres; wrk -t1 -c${CONNECTIONS} requesting uniformly random codes for ${MEMORY_SECONDS} s (${r.requests.toLocaleString('en')} requests, ${Math.round(r.rps)} req/s, ${r.errors} errors); default LRU settings${env.BENCH_SERVER_NODE_OPTIONS ? `; server NODE_OPTIONS=${env.BENCH_SERVER_NODE_OPTIONS}` : ''}.`,
    `- RSS of our server: start ${r.series[0]!.rss} MiB, peak ${peak} MiB, last third within ${tailSpread.toFixed(1)} MiB (last ${r.series.at(-1)!.rss} MiB).`,
    `- V8 heap at the end: ${r.series.at(-1)!.heapUsed} MiB used of ${r.series.at(-1)!.heapTotal} MiB reserved (the rest of the RSS: code, native buffers and memory the allocator keeps).`,
    `- Lookup counters at the end: \`${JSON.stringify(r.layers)}\``,
    '',
    `| t (s) | ${r.series.map((s) => s.t).join(' | ')} |`,
    `|---|${r.series.map(() => '---:').join('|')}|`,
    `| RSS (MiB) | ${r.series.map((s) => s.rss).join(' | ')} |`,
    `| V8 heap used (MiB) | ${r.series.map((s) => s.heapUsed).join(' | ')} |`,
    `| V8 heap reserved (MiB) | ${r.series.map((s) => s.heapTotal).join(' | ')} |`,
  ].join('\n');
}

/** Appends one line to the run history (kept across runs, so a later noisy run never hides an earlier one). */
function appendHistory(line: string): void {
  const doc = readFileSync(DOC, 'utf8');
  const end = '<!-- /bench:history -->';
  const at = doc.indexOf(end);
  if (at < 0) throw new Error(`docs/BENCHMARKS.md lacks the ${end} marker`);
  writeFileSync(DOC, `${doc.slice(0, at)}${line}\n${doc.slice(at)}`);
}

function writeSection(name: string, body: string): void {
  const doc = readFileSync(DOC, 'utf8');
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  if (a < 0 || b < a) throw new Error(`docs/BENCHMARKS.md lacks the ${start} … ${end} markers`);
  writeFileSync(DOC, `${doc.slice(0, a + start.length)}\n${body}\n${doc.slice(b)}`);
  // The house formatter aligns Markdown tables; keep the file as `npx biome check .` wants it.
  execFileSync(join(ROOT, 'node_modules/.bin/biome'), ['format', '--write', DOC], { stdio: 'ignore' });
  say(`wrote the ${name} section of docs/BENCHMARKS.md`);
}

// ------------------------------------------------------------------------------------------------ main

async function main() {
  const mode = process.argv[2] ?? 'all';
  if (!['all', 'paths', 'stampede', 'memory', 'profile'].includes(mode)) {
    throw new Error(`unknown mode "${mode}" (all | paths | stampede | memory | profile)`);
  }
  const started = Date.now();
  let failed = false;
  try {
    await clearBenchRedis();
    if (mode === 'profile') {
      await createBenchDatabase(100_000);
      say(`CPU profile written under ${await profileLru(process.argv[3] === 'bare' ? 'bare' : 'ours')}`);
    } else if (mode === 'memory') {
      await createBenchDatabase(1_000_000);
      writeSection('memory', memorySection(await benchMemory(1_000_000)));
    } else {
      await createBenchDatabase(100_000);
      if (mode === 'all' || mode === 'paths') {
        const results = [];
        // BENCH_PATHS=lru (comma list of path keys) measures some paths only, for iterating; the doc is then left alone.
        const only = process.env.BENCH_PATHS?.split(',').filter(Boolean);
        for (const spec of PATHS.filter((p) => !only || only.includes(p.key))) {
          results.push(await benchPath(spec));
          await clearBenchRedis();
        }
        for (const r of results) {
          say(
            `${r.spec.title}: ours ${Math.round(r.ours.rps)} vs bare ${Math.round(r.bare.rps)} req/s ` +
              `(${(r.rpsRatio * 100).toFixed(1)}%), p99 ${ms(r.ours.p99)} vs ${ms(r.bare.p99)} ms ` +
              `(${r.p99Ratio.toFixed(2)}×): ${r.pass ? 'PASS' : 'FAIL'}`,
          );
        }
        if (!only) writeSection('paths', pathsSection(results));
        if (!only)
          appendHistory(
            `- ${new Date().toISOString().slice(0, 16)}Z, load ${loadavg()[0]!.toFixed(1)}, ${ROUNDS}×${ROUND_SECONDS} s: ` +
              results
                .map(
                  (r) =>
                    `${r.spec.key} ${(r.rpsRatio * 100).toFixed(1)}% / p99 ${r.p99Ratio.toFixed(2)}× ${r.pass ? 'pass' : 'FAIL'}`,
                )
                .join('; '),
          );
        failed ||= results.some((r) => !r.pass);
      }
      if (mode === 'all' || mode === 'stampede') {
        const s = await benchStampede();
        writeSection('stampede', stampedeSection(s));
        failed ||= !s.pass;
      }
    }
  } finally {
    await clearBenchRedis().catch(() => {});
    await dropBenchDatabase().catch(() => {});
  }
  say(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  process.exitCode = failed ? 1 : 0;
}

await main();
