// List latency at 100,000 links: GET /api/v1/links through the whole app (in-process, real Postgres),
// for a first page, deep keyset pages, searches and filters; each compared with the plain first page
// measured in the same run. Three in five links carry an Arabic headline and a WordPress-style
// percent-encoded Arabic slug, the others an English headline: search by title and by the decoded slug is
// compared with today's substring search (code, raw URL, tag) in the same run, and the raw SQL of the old
// search (without the title branch) is timed beside the new one.
//
//   npx tsx bench/api/list_links.ts [links=100000] [runs=60]
import { createHarness } from '../../devkit/harness/harness.ts';
import { AR_WORDS, EN_WORDS } from '../headline_words.ts';

const LINKS = Number(process.argv[2] ?? 100_000);
const RUNS = Number(process.argv[3] ?? 60);

const h = await createHarness();
const started = performance.now();

// WordPress writes non-Latin slugs percent-encoded in lower case.
const slug = (w: string) => encodeURIComponent(w).toLowerCase();
// One INSERT … SELECT over generate_series: realistic URLs and headlines, a few tags, creation times spread
// over a year. Rows i % 5 < 3 are Arabic (title and slug of three words, e.g. "موازنة العام المقبل رقم 42").
await h.db.sql`
  INSERT INTO links (code, target_url, title, status, safety, origin, owner, tags, created_at, updated_at)
  SELECT 'b' || lpad(to_hex(i), 7, '0'),
         'https://www.example-news.com/' || (ARRAY['politics','sport','culture','world','business'])[1 + i % 5]
           || '/2026/' || lpad((1 + i % 12)::text, 2, '0') || '/'
           || CASE WHEN i % 5 < 3
                THEN (${AR_WORDS.map(slug)}::text[])[1 + i % 30] || '-' || (${AR_WORDS.map(slug)}::text[])[1 + (i / 30) % 30]
                     || '-' || (${AR_WORDS.map(slug)}::text[])[1 + (i / 900) % 30] || '-' || i
                ELSE 'story-' || i || '-' || md5(i::text) END,
         CASE WHEN i % 5 < 3
           THEN (${AR_WORDS}::text[])[1 + i % 30] || ' ' || (${AR_WORDS}::text[])[1 + (i / 30) % 30] || ' '
                || (${AR_WORDS}::text[])[1 + (i / 900) % 30] || ' رقم ' || i
           ELSE initcap((${EN_WORDS}::text[])[1 + i % 30]) || ' ' || (${EN_WORDS}::text[])[1 + (i / 30) % 30] || ' '
                || (${EN_WORDS}::text[])[1 + (i / 900) % 30] || ' no. ' || i END,
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
/** The Arabic title of row i (as seeded). */
const arTitle = (i: number) =>
  `${AR_WORDS[i % 30]} ${AR_WORDS[Math.floor(i / 30) % 30]} ${AR_WORDS[Math.floor(i / 900) % 30]} رقم ${i}`;
/** The English title of row i (as seeded). */
const enTitle = (i: number) =>
  `${EN_WORDS[i % 30]} ${EN_WORDS[Math.floor(i / 30) % 30]} ${EN_WORDS[Math.floor(i / 900) % 30]} no. ${i}`;
const rare = Math.floor(LINKS / 10) * 5 + 1; // an Arabic row (i % 5 === 1) in the middle
const rareEnglish = Math.floor(LINKS / 10) * 5 + 3; // an English row (i % 5 === 3)
const q = (text: string) => `/api/v1/links?q=${encodeURIComponent(text)}`;

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
  ['q = rare URL substring', `/api/v1/links?q=story-${rareEnglish}-`],
  ['q = common URL substring', '/api/v1/links?q=politics/2026'],
  ['q = exact tag', '/api/v1/links?q=batch-42'],
  ['q = Arabic title, rare (1 match)', q(arTitle(rare).split(' ').slice(1).join(' '))],
  ['q = Arabic title, typed loosely (1 match)', q(loosely(arTitle(rare).split(' ').slice(1).join(' ')))],
  ['q = Arabic title phrase (~2 matches)', q(arTitle(rare).split(' ').slice(0, 3).join(' '))],
  ['q = Arabic title word (~6% of links)', q('الانتخابات')],
  ['q = English title, rare (1 match)', q(enTitle(rareEnglish).split(' ').slice(1).join(' '))],
  [
    'q = decoded Arabic slug, typed (1 match)',
    q(
      `${AR_WORDS[rare % 30]}-${AR_WORDS[Math.floor(rare / 30) % 30]}-${AR_WORDS[Math.floor(rare / 900) % 30]}-${rare}`,
    ),
  ],
  ['tag filter', '/api/v1/links?tag=batch-42'],
  ['status filter (expired)', '/api/v1/links?status=expired'],
  ['status + safety + origin', '/api/v1/links?status=active&safety=warn&origin=ui'],
  ['sort = code', '/api/v1/links?sort=code'],
  ['sort = updated', '/api/v1/links?sort=updated'],
];

/** What an editor types: bare alef for أ إ آ, heh for teh marbuta, yeh for alef maksura. */
function loosely(text: string): string {
  return text.replace(/[أإآ]/g, 'ا').replace(/ة/g, 'ه').replace(/ى/g, 'ي');
}

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
const substring = results.find((r) => r.name === 'q = rare URL substring')!.p50;
console.log(
  `\n${LINKS.toLocaleString('en')} links seeded in ${(seeded / 1000).toFixed(1)} s (one INSERT … SELECT generate_series); ${RUNS} runs each\n`,
);
console.log('| query | items | p50 ms | p95 ms | p50 / first page | p50 / rare URL substring |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of results) {
  console.log(
    `| ${r.name} | ${r.items} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${(r.p50 / base).toFixed(2)}× | ${(r.p50 / substring).toFixed(2)}× |`,
  );
}

// The search's own SQL, without the app: today's query (code, raw URL, tag) against the same query with the
// title and decoded-URL branch, for a rare URL substring and a rare title (index path, as the list takes it).
const oldSearch = (pattern: string, term: string) => h.db.sql`
  SELECT code FROM links WHERE deleted_at IS NULL AND code = ANY(ARRAY(
    SELECT code FROM links WHERE lower(code) LIKE lower(${pattern})
    UNION SELECT code FROM links WHERE target_url ILIKE ${pattern}
    UNION SELECT code FROM links WHERE tags @> ${h.db.sql.array([term])}::text[]))
  ORDER BY created_at DESC, code DESC LIMIT 51`;
const newSearch = (pattern: string, term: string) => h.db.sql`
  SELECT code FROM links WHERE deleted_at IS NULL AND code = ANY(ARRAY(
    SELECT code FROM links WHERE lower(code) LIKE lower(${pattern})
    UNION SELECT code FROM links WHERE target_url ILIKE ${pattern}
    UNION SELECT code FROM links WHERE search_text LIKE lifeline_search_pattern(${term})
    UNION SELECT code FROM links WHERE tags @> ${h.db.sql.array([term])}::text[]))
  ORDER BY created_at DESC, code DESC LIMIT 51`;
const sqlCases: [string, () => Promise<unknown>][] = [];
for (const [what, term] of [
  ['rare URL substring', `story-${rareEnglish}-`],
  ['rare Arabic title', arTitle(rare).split(' ').slice(1).join(' ')],
] as const) {
  const pattern = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  sqlCases.push([`SQL, today's search (no title branch): ${what}`, () => oldSearch(pattern, term)]);
  sqlCases.push([`SQL, with the title branch: ${what}`, () => newSearch(pattern, term)]);
}
console.log('\n| SQL alone | rows | p50 ms | p95 ms |');
console.log('|---|---:|---:|---:|');
for (const [name, run] of sqlCases) {
  await run();
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    rows = ((await run()) as unknown[]).length;
    times.push(performance.now() - t);
  }
  console.log(
    `| ${name} | ${rows} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} |`,
  );
}
await h.close();
process.exit(0);
