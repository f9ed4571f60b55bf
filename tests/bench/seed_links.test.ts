// The ten-million seeding tool's rows are links Lifeline itself could have made: 2,000 of them seeded into a
// test database hold every state in the stated proportions, satisfy every constraint and trigger (the folded
// search text, the click totals), and the real API lists, searches and pages them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  SEED_SITES,
  seedArabicTitle,
  seedCode,
  seedIsListed,
  seedLinks,
  seedTitleLanguage,
} from '../../bench/seed_links.ts';
import { createHarness, type Harness } from '../../devkit/harness/harness.ts';

const N = 2000;
let h: Harness;
before(async () => {
  h = await createHarness({
    env: { SHORT_BASE_URL: 'http://sho.rt.test', SHORT_DOMAINS: 'sho.rt.test,x.example' },
  });
  // In two chunks, as the tool makes them: link i is the same whichever chunk makes it.
  await seedLinks(h.db.sql, { from: 1, to: 1200, otherDomain: 'x.example' });
  await seedLinks(h.db.sql, { from: 1201, to: N, otherDomain: 'x.example' });
});
after(async () => {
  await h.close();
});

interface Listed {
  items: { code: string; status: string; safety: string; title: string | null }[];
  nextCursor: string | null;
}
async function list(path: string): Promise<Listed> {
  const res = await h.api(path);
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as Listed;
}

describe('bench/seed_links.ts', () => {
  test('every state the schema has, in the stated proportions', async () => {
    const rows = await h.db.sql<{ status: string; safety: string; deleted: boolean; n: number }[]>`
      SELECT status, safety, deleted_at IS NOT NULL AS deleted, count(*)::int AS n
      FROM links WHERE owner <> 'system:probe' GROUP BY 1, 2, 3`;
    const count = (f: (r: (typeof rows)[number]) => boolean) => rows.filter(f).reduce((s, r) => s + r.n, 0);
    assert.equal(
      count(() => true),
      N,
    );
    assert.equal(
      count((r) => r.status === 'expired'),
      N * 0.05,
    );
    assert.equal(
      count((r) => r.status === 'gone' && r.deleted),
      N * 0.03,
    );
    assert.equal(
      count((r) => r.status === 'gone' && !r.deleted),
      N * 0.02,
    );
    assert.equal(
      count((r) => r.status === 'blocked'),
      N * 0.01,
    );
    assert.equal(
      count((r) => r.status === 'pending'),
      N * 0.01,
    );
    assert.equal(
      count((r) => r.status === 'active' && r.safety === 'warn'),
      N * 0.03,
    );
    assert.equal(
      count((r) => r.status === 'active' && r.safety === 'blocked'),
      N * 0.01,
    );
    const [facts] = await h.db.sql<
      {
        wordpress: number;
        posts: number;
        domain: number;
        titled: number;
        arabic: number;
        rules: number;
        tagged: number;
        pastExpiry: number;
        futureExpiry: number;
      }[]
    >`
      SELECT count(*) FILTER (WHERE origin = 'wordpress')::int AS wordpress,
             count(DISTINCT (site, post_id)) FILTER (WHERE site IS NOT NULL)::int AS posts,
             count(*) FILTER (WHERE domain = 'x.example')::int AS domain,
             count(*) FILTER (WHERE title IS NOT NULL)::int AS titled,
             count(*) FILTER (WHERE title ~ '[ء-ي]')::int AS arabic,
             count(*) FILTER (WHERE routing_rules IS NOT NULL)::int AS rules,
             count(*) FILTER (WHERE cardinality(tags) > 0)::int AS tagged,
             count(*) FILTER (WHERE status = 'active' AND expires_at < now())::int AS "pastExpiry",
             count(*) FILTER (WHERE status = 'active' AND expires_at > now())::int AS "futureExpiry"
      FROM links WHERE code LIKE 's%' OR domain <> ''`;
    assert.ok(facts!.wordpress > N * 0.3, `wordpress ${facts!.wordpress}`);
    assert.equal(facts!.posts, facts!.wordpress);
    assert.equal(facts!.domain, N * 0.05);
    assert.equal(facts!.titled, N * 0.9);
    assert.equal(facts!.arabic, N * 0.6);
    assert.equal(facts!.rules, 2);
    assert.ok(facts!.tagged > N * 0.7 && facts!.tagged < N * 0.73, `tagged ${facts!.tagged}`);
    assert.equal(facts!.pastExpiry, N * 0.02);
    assert.equal(facts!.futureExpiry, N * 0.05);
    const sites = await h.db.sql<{ site: string }[]>`SELECT site FROM wordpress_sites ORDER BY site`;
    assert.deepEqual(
      sites.map((s) => s.site),
      SEED_SITES,
    );
  });

  test('side rows in proportion, and what triggers keep agrees with the rows', async () => {
    const [sides] = await h.db.sql<
      {
        audit: number;
        created: number;
        clicked: number;
        clickRows: number;
        totalsWrong: number;
        lastClicks: number;
        bitly: number;
        destinations: number;
        queued: number;
        searchWrong: number;
        orphans: number;
      }[]
    >`
      SELECT (SELECT count(*)::int FROM audit_log) AS audit,
             (SELECT count(*)::int FROM audit_log WHERE action = 'link.created') AS created,
             (SELECT count(DISTINCT code)::int FROM click_counts) AS clicked,
             (SELECT count(*)::int FROM click_counts) AS "clickRows",
             (SELECT count(*)::int FROM link_click_totals AS t WHERE t.clicks <> (
                SELECT sum(clicks) FROM click_counts AS c WHERE c.code = t.code AND c.kind IN ('human', 'qr')))
               AS "totalsWrong",
             (SELECT count(*)::int FROM link_last_clicks) AS "lastClicks",
             (SELECT count(*)::int FROM vendor_links WHERE vendor = 'bitly') AS bitly,
             (SELECT count(*)::int FROM destination_states) AS destinations,
             (SELECT count(*)::int FROM link_sync_queue) AS queued,
             (SELECT count(*)::int FROM links
               WHERE search_text IS DISTINCT FROM lifeline_search_text(title, target_url)) AS "searchWrong",
             (SELECT count(*)::int FROM audit_log AS a WHERE NOT EXISTS (SELECT 1 FROM links AS l WHERE l.code = a.code))
               AS orphans`;
    assert.equal(sides!.created, N);
    assert.ok(sides!.audit > N * 1.1 && sides!.audit < N * 1.25, `audit ${sides!.audit}`);
    assert.ok(Math.abs(sides!.clicked - N * 0.3) < N * 0.02, `clicked ${sides!.clicked}`);
    assert.equal(sides!.clickRows, sides!.clicked * 3);
    assert.equal(sides!.totalsWrong, 0);
    assert.equal(sides!.lastClicks, sides!.clicked);
    assert.equal(sides!.bitly, N * 0.47);
    assert.equal(sides!.destinations, N * 0.1);
    assert.equal(sides!.queued, 1);
    assert.equal(sides!.searchWrong, 0);
    assert.equal(sides!.orphans, 0);
  });

  test('every constraint holds when checked again', async () => {
    // Each CHECK and foreign key of the seeded tables dropped and added back (which validates every row), and
    // each unique index built again, in a transaction rolled back at the end: any row that breaks one fails.
    const constraints = await h.db.sql<{ table: string; name: string; def: string }[]>`
      SELECT conrelid::regclass::text AS table, conname AS name, pg_get_constraintdef(oid) AS def
      FROM pg_constraint
      WHERE contype IN ('c', 'f') AND conrelid = ANY(ARRAY['links', 'vendor_links', 'destination_states',
        'audit_log', 'click_counts', 'link_click_totals', 'link_last_clicks', 'link_sync_queue']::regclass[])`;
    assert.ok(constraints.length > 10, `${constraints.length} constraints`);
    const checked = await h.db.sql
      .begin(async (tx) => {
        for (const c of constraints) {
          await tx.unsafe(`ALTER TABLE ${c.table} DROP CONSTRAINT "${c.name}"`);
          await tx.unsafe(`ALTER TABLE ${c.table} ADD CONSTRAINT "${c.name}" ${c.def}`);
        }
        await tx.unsafe('REINDEX INDEX links_site_post_key');
        await tx.unsafe('REINDEX INDEX links_pkey');
        throw new Error('checked, rolled back');
      })
      .catch((error: unknown) => String(error));
    assert.match(checked, /checked, rolled back/);
  });

  test('the real API lists, searches, filters and pages the seeded links', async () => {
    const first = await list('/api/v1/links?limit=50');
    assert.equal(first.items.length, 50);
    // Newest first: the highest i that is listed.
    let newest = N;
    while (!seedIsListed(newest)) newest--;
    assert.equal(first.items[0]!.code, seedCode(newest));
    // Every listed link once, paging the whole list.
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: Listed = await list(`/api/v1/links?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      for (const item of page.items) seen.add(item.code);
      cursor = page.nextCursor;
    } while (cursor);
    assert.equal(seen.size, N - N * 0.03);
    // An Arabic headline typed loosely (bare alef, heh for teh marbuta) finds its link.
    let i = 1011;
    while (seedTitleLanguage(i) !== 'ar' || !seedIsListed(i)) i++;
    const loose = seedArabicTitle(i).replace(/[أإآ]/g, 'ا').replace(/ة/g, 'ه');
    const found = await list(`/api/v1/links?q=${encodeURIComponent(loose.split(' ').slice(1).join(' '))}`);
    assert.deepEqual(
      found.items.map((x) => x.code),
      [seedCode(i)],
    );
    const pending = await list('/api/v1/links?status=pending&limit=100');
    assert.equal(pending.items.length, N * 0.01);
    const tagged = await list('/api/v1/links?tag=batch-42&limit=100');
    assert.ok(tagged.items.length >= 1);
    const other = await list('/api/v1/links?domain=x.example&limit=200');
    assert.equal(other.items.length, N * 0.05);
    const clicks = await list('/api/v1/links?sort=clicks&limit=5');
    assert.equal(clicks.items.length, 5);
  });
});
