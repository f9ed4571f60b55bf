// List latency at 100,000 links: GET /api/v1/links through the whole app (in-process, real Postgres),
// for a first page, deep keyset pages, searches and filters; each compared with the plain first page
// measured in the same run.
//
//   npx tsx bench/api/list_links.ts [links=100000] [runs=60]
import { createHarness } from '../../tests/helpers/harness.ts';

const LINKS = Number(process.argv[2] ?? 100_000);
const RUNS = Number(process.argv[3] ?? 60);

const h = await createHarness();
const started = performance.now();
// One INSERT … SELECT over generate_series: realistic URLs, a few tags, creation times spread over a year.
await h.db.sql`
  INSERT INTO links (code, target_url, status, safety, origin, owner, tags, created_at, updated_at)
  SELECT 'b' || lpad(to_hex(i), 7, '0'),
         'https://www.example-news.com/' || (ARRAY['politics','sport','culture','world','business'])[1 + i % 5]
           || '/2026/' || lpad((1 + i % 12)::text, 2, '0') || '/story-' || i || '-' || md5(i::text),
         (ARRAY['active','active','active','active','gone','expired'])[1 + i % 6],
         (ARRAY['clean','clean','unknown','warn'])[1 + i % 4],
         (ARRAY['api','ui','wordpress'])[1 + i % 3],
         'bench',
         ARRAY[(ARRAY['politics','sport','culture','world','business'])[1 + i % 5], 'batch-' || (i % 100)],
         now() - (i || ' seconds')::interval * 300,
         now() - (i || ' seconds')::interval * 300
  FROM generate_series(1, ${LINKS}) AS i`;
await h.db.sql`ANALYZE links`;
const seeded = performance.now() - started;

async function get(
  path: string,
): Promise<{ ms: number; body: { items: { code: string }[]; nextCursor: string | null } }> {
  const t = performance.now();
  const res = await h.api(path);
  const body = (await res.json()) as { items: { code: string }[]; nextCursor: string | null };
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return { ms: performance.now() - t, body };
}

// A cursor 50 pages deep (2,500 links in), reached by paging.
let deep = '';
for (let i = 0; i < 50; i++)
  deep = (await get(`/api/v1/links?limit=50${deep ? `&cursor=${deep}` : ''}`)).body.nextCursor!;

const cases: [string, string][] = [
  ['first page (baseline)', '/api/v1/links?limit=50'],
  ['page 51 (keyset cursor)', `/api/v1/links?limit=50&cursor=${deep}`],
  ['q = one code', '/api/v1/links?q=b00186a0'],
  ['q = rare URL substring', `/api/v1/links?q=story-${Math.floor(LINKS / 2)}-`],
  ['q = common URL substring', '/api/v1/links?q=politics/2026'],
  ['q = exact tag', '/api/v1/links?q=batch-42'],
  ['tag filter', '/api/v1/links?tag=batch-42'],
  ['status filter (expired)', '/api/v1/links?status=expired'],
  ['status + safety + origin', '/api/v1/links?status=active&safety=warn&origin=ui'],
  ['sort = code', '/api/v1/links?sort=code'],
  ['sort = updated', '/api/v1/links?sort=updated'],
];

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const results: { name: string; p50: number; p95: number; items: number }[] = [];
for (const [, path] of cases) await get(path); // warm
for (const [name, path] of cases) {
  const times: number[] = [];
  let items = 0;
  for (let i = 0; i < RUNS; i++) {
    const r = await get(path);
    times.push(r.ms);
    items = r.body.items.length;
  }
  results.push({ name, p50: percentile(times, 50), p95: percentile(times, 95), items });
}
const base = results[0]!.p50;
console.log(
  `\n${LINKS.toLocaleString('en')} links seeded in ${(seeded / 1000).toFixed(1)} s (one INSERT … SELECT generate_series); ${RUNS} runs each\n`,
);
console.log('| query | items | p50 ms | p95 ms | p50 / first page |');
console.log('|---|---:|---:|---:|---:|');
for (const r of results) {
  console.log(
    `| ${r.name} | ${r.items} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${(r.p50 / base).toFixed(2)}× |`,
  );
}
await h.close();
process.exit(0);
