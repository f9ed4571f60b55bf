// The newsroom dashboard's reads on a large archive (ADR 0079): 100,000 links, a third of them clicked on six
// days each over the last year (three click_counts rows a day: two countries and QR), Bitly's daily counts of
// 10,000 links over 30 days. Times the dashboard's statements (lib/stores/dashboard_store.ts, through their
// functions) against the baseline of summing click_counts itself for the same answers in the same run, and prints
// the EXPLAIN (ANALYZE, BUFFERS) of each (the statements' text is repeated here for EXPLAIN).
//
//   npx tsx bench/dashboard_reads.ts [links=100000] [runs=15]
import { createHarness } from '../devkit/harness/harness.ts';
import { createNewsroomDashboard, windowDays } from '../lib/clicks/newsroom_dashboard.ts';
import {
  getWindowBreakdown,
  listClickDayTotals,
  listVendorDayTotals,
} from '../lib/stores/dashboard_store.ts';

const LINKS = Number(process.argv[2] ?? 100_000);
const RUNS = Number(process.argv[3] ?? 15);

const h = await createHarness();
const sql = h.db.sql;
const t0 = performance.now();
await sql`
  INSERT INTO links (code, target_url, title, status, safety, origin, owner, tags, site, post_id, created_at, updated_at)
  SELECT 'd' || lpad(to_hex(i), 7, '0'), 'https://www.example-news.com/story-' || i, 'Story ' || i, 'active', 'clean',
         'api', 'bench',
         ARRAY[(ARRAY['politics','sport','culture','world','business'])[1 + i % 5], 'batch-' || (i % 100)],
         CASE WHEN i % 3 = 0 THEN 'site-' || (i % 4) END, CASE WHEN i % 3 = 0 THEN i END,
         now() - (i || ' seconds')::interval * 300, now()
  FROM generate_series(1, ${LINKS}) AS i`;
// A third clicked, each on six days of the last year.
await sql`
  INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks)
  SELECT 'd' || lpad(to_hex(i), 7, '0'),
         date_trunc('hour', now()) - ((((i * 7 + d * 61) % 365) * 24 + (i % 24)) || ' hours')::interval,
         k.kind, k.country, '', 1 + (i + d) % 20
  FROM generate_series(1, ${LINKS}) AS i, generate_series(0, 5) AS d,
       (VALUES ('human', 'EG'), ('human', 'SA'), ('qr', '')) AS k(kind, country)
  WHERE i % 3 = 1
  ON CONFLICT DO NOTHING`;
await sql`
  INSERT INTO vendor_daily_clicks (code, vendor, day, clicks)
  SELECT 'd' || lpad(to_hex(i), 7, '0'), 'bitly', (now() AT TIME ZONE 'UTC')::date - d, 1 + (i + d) % 9
  FROM generate_series(1, ${LINKS}, ${Math.max(1, Math.floor(LINKS / 10_000))}) AS i, generate_series(1, 30) AS d`;
await sql`ANALYZE`;
const [counts] = await sql<{ links: number; clicks: number; days: number; vendor: number }[]>`
  SELECT (SELECT count(*) FROM links)::int AS links, (SELECT count(*) FROM click_counts)::int AS clicks,
         (SELECT count(*) FROM click_days)::int AS days, (SELECT count(*) FROM vendor_daily_clicks)::int AS vendor`;
console.log(
  `seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${counts!.links} links, ${counts!.clicks} click_counts rows, ` +
    `${counts!.days} click_days rows, ${counts!.vendor} vendor_daily_clicks rows`,
);

const now = new Date();
const month = windowDays('30d', now);

async function time(label: string, work: () => Promise<unknown>): Promise<number> {
  await work();
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await work();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const median = ms[Math.floor(ms.length / 2)]!;
  console.log(`${label.padEnd(58)} median ${median.toFixed(1).padStart(7)} ms  (min ${ms[0]!.toFixed(1)})`);
  return median;
}

/** The baseline: the same answers summed from click_counts itself (hour range, readers' kinds). */
const fromCounts = (fromDay: string, toDay: string) => sql`
  WITH w AS MATERIALIZED (
    SELECT code, sum(clicks) AS clicks FROM click_counts
    WHERE hour >= ${fromDay}::date AND hour < ${toDay}::date + 1 AND kind IN ('human', 'qr')
    GROUP BY code)
  SELECT (SELECT json_agg(t) FROM (SELECT w.code, l.title, w.clicks FROM w JOIN links l USING (code)
          WHERE l.deleted_at IS NULL ORDER BY w.clicks DESC, w.code LIMIT 10) t),
         (SELECT json_agg(t) FROM (SELECT tag, sum(w.clicks) FROM w JOIN links l USING (code), unnest(l.tags) tag
          WHERE l.deleted_at IS NULL GROUP BY tag ORDER BY 2 DESC LIMIT 10) t)`;

console.log(
  `\nload average before: ${(await import('node:os'))
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);
const totals = await time('dashboard: our days, 30 days (click_days)', () =>
  listClickDayTotals(sql, month.fromDay, month.toDay),
);
const totalsBase = await time(
  'baseline: our days, 30 days (click_counts)',
  () => sql`
  SELECT date_trunc('day', hour AT TIME ZONE 'UTC') AS day, sum(clicks) FROM click_counts
  WHERE hour >= ${month.fromDay}::date AND hour < ${month.toDay}::date + 1 AND kind IN ('human', 'qr') GROUP BY 1`,
);
await time("dashboard: Bitly's days, 30 days (vendor_daily_clicks index)", () =>
  listVendorDayTotals(sql, 'bitly', month.fromDay, month.toDay),
);
const ratios: string[] = [`totals ${(totals / totalsBase).toFixed(2)}`];
for (const w of ['today', '7d', '30d'] as const) {
  const { fromDay, toDay } = windowDays(w, now);
  const mine = await time(`dashboard: ${w} breakdown (top, tags, sites, domains)`, () =>
    getWindowBreakdown(sql, fromDay, toDay, 10),
  );
  const base = await time(`baseline: ${w} top and tags from click_counts`, () => fromCounts(fromDay, toDay));
  ratios.push(`${w} ${(mine / base).toFixed(2)}`);
}
const read = createNewsroomDashboard(sql);
await time('whole page read, 7 days, its lists cached', () => read('7d', now));
await time('whole page read, 30 days, uncached', () => createNewsroomDashboard(sql)('30d', now));
console.log(`dashboard / baseline (median): ${ratios.join(', ')}`);
console.log(
  `load average after: ${(await import('node:os'))
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);

console.log('\nEXPLAIN (ANALYZE, BUFFERS), 30 days:');
const explain = async (label: string, text: string, params: unknown[]) => {
  const rows = await sql.unsafe(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params as never[]);
  console.log(`-- ${label}\n${rows.map((r) => r['QUERY PLAN']).join('\n')}\n`);
};
await explain(
  'our days',
  `SELECT day, sum(clicks) FROM click_days WHERE day BETWEEN $1::date AND $2::date GROUP BY day ORDER BY day`,
  [month.fromDay, month.toDay],
);
await explain(
  "Bitly's days",
  `SELECT day, sum(clicks) FROM vendor_daily_clicks WHERE vendor = 'bitly' AND day BETWEEN $1::date AND $2::date
   GROUP BY day ORDER BY day`,
  [month.fromDay, month.toDay],
);
await explain(
  'the window breakdown',
  `WITH window_clicks AS MATERIALIZED (
     SELECT code, sum(clicks) AS clicks FROM click_days WHERE day BETWEEN $1::date AND $2::date
     GROUP BY code HAVING sum(clicks) > 0
   ), clicked AS MATERIALIZED (
     SELECT w.code, w.clicks, l.tags, l.site, l.domain
     FROM window_clicks AS w JOIN links AS l ON l.code = w.code WHERE l.deleted_at IS NULL
   )
   SELECT
     (SELECT json_agg(t) FROM (SELECT c.code, l.title, c.clicks
        FROM (SELECT code, clicks FROM clicked ORDER BY clicks DESC, code LIMIT 10) c JOIN links l ON l.code = c.code) t),
     (SELECT json_agg(g) FROM (SELECT tag, sum(clicks) FROM clicked, unnest(tags) AS tag GROUP BY tag
                               ORDER BY 2 DESC, 1 LIMIT 10) g),
     (SELECT json_agg(g) FROM (SELECT site, sum(clicks) FROM clicked GROUP BY site ORDER BY 2 DESC LIMIT 10) g),
     (SELECT json_agg(g) FROM (SELECT domain, sum(clicks) FROM clicked GROUP BY domain ORDER BY 2 DESC LIMIT 10) g)`,
  [month.fromDay, month.toDay],
);
await h.close();
