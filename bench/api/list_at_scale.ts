// The link list, its searches and the CSV export of the whole list against a database seeded by
// bench/seed_links.ts (100,000 or 10,000,000 links): the real web process (main.ts) is started on it and asked
// through HTTP, as an editor's browser or an integrator would. Every query's p50 is also given against the plain
// first page measured in the same run (docs/API_BENCHMARKS.md, "Ten million links").
//
//   npx tsx bench/seed_links.ts 10000000 --database=lifeline_10m      # once
//   npx tsx bench/api/list_at_scale.ts --database=lifeline_10m [runs=40] [--export] [--only=first,clicks]
//
// With --export it then downloads GET /api/v1/links.csv (every listed link) and samples the web process's RSS
// every 250 ms while the download runs.
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { startEntry } from '../../devkit/harness/entry_process.ts';
import { getFreePort, startDevServer } from '../../scripts/dev_server.ts';
import { ensureTemporalCli } from '../../scripts/temporal_cli.ts';
import { seedArabicTitle, seedCode, seedEnglishTitle } from '../seed_links.ts';

const argValue = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const DATABASE = argValue('database') ?? 'lifeline_10m';
const RUNS = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 40);
const EXPORT = process.argv.includes('--export');
const ONLY = argValue('only')?.split(',');
const API_KEY = 'll_bench_listatscale_00000000000000000000000';
const ADMIN_URL =
  process.env.LIFELINE_TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const say = (m: string) => console.error(`[list ${new Date().toISOString().slice(11, 19)}] ${m}`);

const dbUrl = new URL(ADMIN_URL);
dbUrl.pathname = `/${DATABASE}`;
const sql = postgres(dbUrl.toString(), { max: 1, onnotice: () => {} });
const [counted] = await sql<{ links: number }[]>`SELECT count(*)::int AS links FROM links`;
const links = counted?.links ?? 0;

let address = process.env.LIFELINE_TEST_TEMPORAL_ADDRESS;
let stopTemporal: (() => Promise<void>) | undefined;
if (!address) {
  const server = await startDevServer({
    cli: await ensureTemporalCli(say),
    port: await getFreePort(),
    log: () => {},
  });
  address = server.address;
  stopTemporal = () => server.stop();
}
const port = await getFreePort();
const startedAt = performance.now();
const web = startEntry('main.ts', {
  env: {
    DATABASE_URL: dbUrl.toString(),
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TASK_QUEUE: `bench-list-at-scale-${process.pid}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    // No port: the stored-target review's policy (ADR 0017) stays the same from one run to the next, so it reads
    // every link once, at the first start on a database, not at every start.
    SHORT_BASE_URL: 'http://links.example',
    SHORT_DOMAINS: 'links.example,x.example',
    APP_BASE_URL: `http://127.0.0.1:${port}`,
    BOOTSTRAP_API_KEY: API_KEY,
    WORDPRESS_WEBHOOK_SECRET: 'whsec_bench_listatscale_0000000000000000000',
    ADMIN_EMAIL: 'admin@example.test',
    ADMIN_PASSWORD: 'correct horse battery',
    LOG_LEVEL: 'warn',
    SHUTDOWN_DELAY_MS: '0',
  },
  keepChars: 20_000,
});
const base = `http://127.0.0.1:${port}`;
for (;;) {
  if (web.child.exitCode !== null) throw new Error(`web exited:\n${web.output()}`);
  try {
    const r = await fetch(`${base}/readyz`);
    await r.body?.cancel();
    if (r.status === 200) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 200));
}
const readyS = (performance.now() - startedAt) / 1000;
say(`web ready in ${readyS.toFixed(1)} s on ${links.toLocaleString('en')} links`);

interface Page {
  items: { code: string }[];
  nextCursor: string | null;
}
async function get(path: string): Promise<{ ms: number; body: Page }> {
  const t = performance.now();
  const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${API_KEY}` } });
  const body = (await res.json()) as Page;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return { ms: performance.now() - t, body };
}

/** A cursor as the server writes it (base64url JSON: sort, value, code, direction), for a row deep in the list. */
function cursorAt(sort: string, value: string, code: string): string {
  const json = JSON.stringify({ s: sort, v: value, c: code, d: 'a' });
  return Buffer.from(json).toString('base64url');
}
// The middle of the newest-first list (half the links are newer), and the middle of the clicked run.
const middle = Math.floor(links / 2);
const [mid] = await sql<{ code: string; created: string }[]>`
  SELECT code, created_at::text AS created FROM links WHERE code = ${seedCode(middle)}`;
const [clickMid] = await sql<{ code: string; clicks: string }[]>`
  SELECT code, clicks::text AS clicks FROM link_click_totals AS t WHERE t.clicks > 0
  ORDER BY t.clicks DESC, t.code DESC OFFSET ${Math.floor(links * 0.15)} LIMIT 1`;
// A rare row: an Arabic headline (lang (i / 10) % 10 < 6) and an English one, both listed, near the middle.
const rareAr = middle - (middle % 100) + 1 + 10; // i % 100 = 11: active; (i / 10) % 10 = 1: Arabic
const rareEn = middle - (middle % 1000) + 1 + 70; // (i / 10) % 10 = 7: English
const q = (text: string) => `/api/v1/links?q=${encodeURIComponent(text)}`;
const loosely = (text: string) => text.replace(/[أإآ]/g, 'ا').replace(/ة/g, 'ه').replace(/ى/g, 'ي');
const codeFragment = seedCode(middle).slice(0, 6);

const cases: [string, string, string][] = [
  ['first', 'first page (baseline)', '/api/v1/links?limit=50'],
  [
    'deep',
    'deep page (keyset cursor, half-way)',
    `/api/v1/links?limit=50&cursor=${cursorAt('newest', mid!.created, mid!.code)}`,
  ],
  ['title-ar', 'q = Arabic title, rare (1 match)', q(seedArabicTitle(rareAr).split(' ').slice(1).join(' '))],
  [
    'title-ar-loose',
    'q = Arabic title typed loosely (1 match)',
    q(loosely(seedArabicTitle(rareAr).split(' ').slice(1).join(' '))),
  ],
  ['title-ar-word', 'q = Arabic title word (~2% of links)', q('الانتخابات')],
  [
    'title-en',
    'q = English title, rare (1 match)',
    q(seedEnglishTitle(rareEn).split(' ').slice(1).join(' ')),
  ],
  ['code', `q = code fragment (${codeFragment}, a prefix)`, q(codeFragment)],
  ['code-one', 'q = one whole code', q(seedCode(rareAr))],
  ['tag', 'tag filter (batch-42: 1 in 1,400)', '/api/v1/links?tag=batch-42'],
  ['tag-common', 'tag filter (breaking: 1 in 7)', '/api/v1/links?tag=breaking'],
  ['status', 'status filter (pending: 1%)', '/api/v1/links?status=pending'],
  ['status-blocked', 'status filter (blocked: 1%)', '/api/v1/links?status=blocked'],
  ['clicks', 'sort = clicks (most clicked), first page', '/api/v1/links?sort=clicks'],
  [
    'clicks-deep',
    'sort = clicks, deep page',
    `/api/v1/links?sort=clicks&cursor=${cursorAt('clicks', clickMid!.clicks, clickMid!.code)}`,
  ],
  ['updated', 'sort = updated', '/api/v1/links?sort=updated'],
];

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const results: { name: string; p50: number; p99: number; items: number }[] = [];
for (const [key, name, path] of cases) {
  if (ONLY && !ONLY.includes(key)) continue;
  await get(path); // warm
  const times: number[] = [];
  let items = 0;
  for (let i = 0; i < RUNS; i++) {
    const r = await get(path);
    times.push(r.ms);
    items = r.body.items.length;
  }
  results.push({ name, p50: percentile(times, 50), p99: percentile(times, 99), items });
  say(`${name}: p50 ${percentile(times, 50).toFixed(1)} ms (load ${load()})`);
}
const baseline = results[0]!.p50;
console.log(
  `\n${DATABASE}: ${links.toLocaleString('en')} links; web ready in ${readyS.toFixed(1)} s; ${RUNS} runs each; load ${load()}\n`,
);
console.log('| query | items | p50 ms | p99 ms | p50 / first page |');
console.log('|---|---:|---:|---:|---:|');
for (const r of results) {
  console.log(
    `| ${r.name} | ${r.items} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${(r.p50 / baseline).toFixed(2)}× |`,
  );
}

if (EXPORT) {
  const rssKb = () =>
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${web.child.pid}/status`, 'utf8'))![1]);
  const before = rssKb();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssKb());
  }, 250);
  const t = performance.now();
  const res = await fetch(`${base}/api/v1/links.csv`, { headers: { Authorization: `Bearer ${API_KEY}` } });
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    for (const b of chunk) if (b === 10) lines++;
  }
  clearInterval(sampler);
  const s = (performance.now() - t) / 1000;
  console.log(
    `\nGET /api/v1/links.csv: ${res.status}, ${(lines - 1).toLocaleString('en')} rows, ${(bytes / 1e6).toFixed(0)} MB in ${s.toFixed(0)} s ` +
      `(${((lines - 1) / s).toFixed(0)} rows/s); web RSS ${(before / 1024).toFixed(0)} MB before, peak ${(peak / 1024).toFixed(0)} MB; load ${load()}`,
  );
}

await web.stop({ killAfterMs: 10_000 });
await stopTemporal?.();
await sql.end();
process.exit(0);
