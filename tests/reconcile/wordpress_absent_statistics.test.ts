import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../devkit/harness/database.ts';
import { reconcileAbsentPosts } from '../../lib/reconcile/wordpress_absent.ts';
import type { WordPressReconcileDeps } from '../../lib/reconcile/wordpress_pass.ts';

// The WordPress leg's last step, the site's live links no post of its listing named, anti-joins the run's marks.
// It must not be planned on statistics from before the site's pages wrote those marks: taking the run to have
// none, the planner read every mark once per link (over 20 s per site at 100,000 links: bench/reconcile_scale.ts).

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
