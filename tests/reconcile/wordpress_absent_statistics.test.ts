import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { reconcileAbsentPosts } from '../../lib/reconcile/wordpress_absent.ts';
import type { WordPressReconcileDeps } from '../../lib/reconcile/wordpress_pass.ts';

// The WordPress leg's last step, the site's live links no post of its listing named, anti-joins the run's marks.
// It must not be planned on statistics from before the site's pages wrote those marks: taking the run to have
// none, the planner read every mark once per link (over 20 s per site at 100,000 links: bench/reconcile_scale.ts).
// Nor may it be one statement over the whole site: a site of a million links is walked a stretch of post IDs at a
// time, the activity's heartbeat between stretches.

const SITE = 'statsnews';
const RUN = 'reconcile:test-absent-statistics';
let db: TestDatabase;

before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});

/** The planner's estimate of the run's WordPress marks. */
async function estimatedWordPressMarks(): Promise<number> {
  const [row] = await db.sql.unsafe(
    `EXPLAIN (FORMAT JSON) SELECT 1 FROM reconcile_marks WHERE run_id = $1 AND side = 'wordpress'`,
    [RUN],
  );
  return (row!['QUERY PLAN'] as { Plan: { 'Plan Rows': number } }[])[0]!.Plan['Plan Rows'];
}

test('the statistics of the marks are fresh before the absent links are looked for', async () => {
  await db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner, site, post_id, created_at)
    SELECT 'st' || i, 'https://news.example/story-' || i, 'active', 'clean', 'wordpress', ${`wordpress:${SITE}`},
           ${SITE}, i, now() - interval '1 hour'
    FROM generate_series(1, 2000) AS i`;
  // The Bitly pass's marks, analyzed when it ends (reconcileMissingOnBitly), before any WordPress mark.
  await db.sql`
    INSERT INTO reconcile_marks (run_id, side, code) SELECT ${RUN}, 'bitly', 'st' || i FROM generate_series(1, 2000) AS i`;
  await db.sql`ANALYZE reconcile_marks`;
  // The site's pages: every post listed but the last (deleted in WordPress for good).
  await db.sql`
    INSERT INTO reconcile_marks (run_id, side, code)
    SELECT ${RUN}, 'wordpress', ${`${SITE}:`} || i FROM generate_series(1, 1999) AS i`;
  assert.ok(
    (await estimatedWordPressMarks()) < 10,
    'the statistics of before the pages know no WordPress mark',
  );

  await reconcileAbsentPosts({ sql: db.sql } as unknown as WordPressReconcileDeps, {
    runId: RUN,
    site: SITE,
    repair: false,
    startedAtMs: Date.now(),
    migrating: false,
    tally: { rebound: 0, reviewed: 0 },
  });

  const estimate = await estimatedWordPressMarks();
  assert.ok(estimate > 1000, `the planner expects ${estimate} WordPress marks, not ~2,000`);
  const drift = await db.sql`
    SELECT code, drift FROM reconcile_marks WHERE run_id = ${RUN} AND side = 'wordpress' AND drift IS NOT NULL`;
  assert.deepEqual(
    drift.map((r) => ({ ...r })),
    [{ code: `${SITE}:2000`, drift: 'gone' }],
  );
});

test("a site's absent links are found a stretch of its post IDs at a time, with a beat after each", async () => {
  const site = 'bignews';
  const run = 'reconcile:test-absent-stretches';
  const stretch = 1_000;
  const posts = 2 * stretch + 400;
  // Post IDs 2, 4, 6…: a stretch ends on an ID the site has, never on a count.
  await db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner, site, post_id, created_at)
    SELECT 'bg' || i, 'https://big.example/story-' || i, 'active', 'clean', 'wordpress', ${`wordpress:${site}`},
           ${site}, 2 * i, now() - interval '1 hour'
    FROM generate_series(1, ${posts}) AS i`;
  // Absent from the listing: the first post, both sides of each stretch's end, the last. Two more posts have no
  // mark and are not judged: one link deleted, one detached from its post (a negative placeholder).
  const absent = [1, stretch, stretch + 1, 2 * stretch, 2 * stretch + 1, posts].map((i) => 2 * i);
  const notJudged = [2 * 77, 2 * 88];
  await db.sql`UPDATE links SET deleted_at = now() WHERE site = ${site} AND post_id = ${notJudged[0]!}`;
  await db.sql`UPDATE links SET post_id = -post_id WHERE site = ${site} AND post_id = ${notJudged[1]!}`;
  await db.sql`
    INSERT INTO reconcile_marks (run_id, side, code)
    SELECT ${run}, 'wordpress', ${`${site}:`} || (2 * i)
    FROM generate_series(1, ${posts}) AS i
    WHERE 2 * i <> ALL (${db.sql.array([...absent, ...notJudged])}::bigint[])`;

  let beats = 0;
  await reconcileAbsentPosts(
    { sql: db.sql } as unknown as WordPressReconcileDeps,
    {
      runId: run,
      site,
      repair: false,
      startedAtMs: Date.now(),
      migrating: false,
      tally: { rebound: 0, reviewed: 0 },
    },
    { beat: () => beats++, stretch },
  );

  assert.equal(beats, 3, 'two whole stretches and the rest');
  const gone = await db.sql<{ code: string }[]>`
    SELECT code FROM reconcile_marks WHERE run_id = ${run} AND side = 'wordpress' AND drift = 'gone' ORDER BY code`;
  assert.deepEqual(
    gone.map((r) => r.code),
    absent.map((postId) => `${site}:${postId}`).sort(),
  );
});
