import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import {
  planTouchRounds,
  TOUCH_ROWS_PER_PAGE,
  touchSafetyCheckedAt,
} from '../../../lib/stores/link_lifecycle_store.ts';

// A re-scan records each unchanged link's check. Links made together share pages, and a chunk takes them together:
// the touch must keep every row's new version on its own page (a heap-only update, no new index entries), which
// one UPDATE of the whole chunk could not once the page's free space ran out.
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db.drop();
});

/** Each code's page, from its row address. */
async function pages(codes: string[]): Promise<Map<string, number>> {
  const rows = await db.sql<{ code: string; page: number }[]>`
    SELECT code, (ctid::text::point)[0]::int AS page FROM links WHERE code = ANY(${codes}::text[])`;
  return new Map(rows.map((r) => [r.code, r.page]));
}

/** Waits up to `ms` for a moment when no other backend on the server holds a snapshot; false if none came. */
async function waitForNoOtherSnapshot(ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    const [row] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE pid <> pg_backend_pid() AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)`;
    if (row!.n === 0) return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('touchSafetyCheckedAt', () => {
  test('links sharing pages are all marked checked, and every row stays on its page, pass after pass', async () => {
    // 90 links of a realistic size (a headline, a permalink, tags), made in one statement: about 9 a page.
    const codes = Array.from({ length: 90 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    await db.sql`
      INSERT INTO links (code, target_url, status, safety, origin, owner, title, tags)
      SELECT c, 'https://www.example-news.com/2026/12/04/' || repeat('a-long-headline-slug-', 6) || c, 'active',
             'clean', 'wordpress', 'wordpress', repeat('A headline of the kind a newsroom writes ', 4) || c,
             ARRAY['politics', 'elections', 'world']
      FROM unnest(${codes}::text[]) AS c`;
    const before = await pages(codes);
    const perPage = new Map<number, number>();
    for (const page of before.values()) perPage.set(page, (perPage.get(page) ?? 0) + 1);
    assert.ok(
      Math.max(...perPage.values()) >= 6,
      `the links share pages (${[...perPage.values()].join(', ')} a page)`,
    );

    for (const pass of [1, 2, 3]) {
      const at = new Date(Date.UTC(2026, 11, 4, 12, pass));
      // Pruning a page needs its dead versions to be older than every snapshot open on the server, and the suite
      // shares the server: a pass that began while another snapshot was open may find nothing to prune, and
      // then rows leave their pages however the rounds are cut. A pass is judged only when it began quiet.
      let moved: string[] = [];
      let judged = 0;
      for (let attempt = 0; attempt < 8 && (judged === 0 || moved.length > 0); attempt++) {
        const quiet = await waitForNoOtherSnapshot(5_000);
        const before = await pages(codes);
        await touchSafetyCheckedAt(db.sql, [...codes].reverse(), at);
        const now = await pages(codes);
        moved = codes.filter((c) => now.get(c) !== before.get(c));
        if (quiet && (await waitForNoOtherSnapshot(0))) judged++;
        else moved = [];
      }
      const checked = await db.sql<{ code: string; at: Date }[]>`
        SELECT code, safety_checked_at AS at FROM links WHERE code = ANY(${codes}::text[])`;
      assert.equal(checked.length, codes.length);
      for (const row of checked) assert.equal(row.at.getTime(), at.getTime(), `${row.code} in pass ${pass}`);
      if (judged > 0) assert.deepEqual(moved, [], `pass ${pass}: rows that left their page`);
    }
  });

  test('the rounds hold at most two codes of a page each, and codes on pages of their own go in one', () => {
    const rows = [
      ...Array.from({ length: 7 }, (_, i) => ({ code: `a${i}`, page: '1' })),
      ...Array.from({ length: 3 }, (_, i) => ({ code: `b${i}`, page: '2' })),
      { code: 'c0', page: '3' },
    ];
    const rounds = planTouchRounds(rows);
    assert.deepEqual(rounds, [['a0', 'a1', 'b0', 'b1', 'c0'], ['a2', 'a3', 'b2'], ['a4', 'a5'], ['a6']]);
    assert.equal(TOUCH_ROWS_PER_PAGE, 2);
    const spread = Array.from({ length: 500 }, (_, i) => ({ code: `s${i}`, page: String(i) }));
    assert.equal(planTouchRounds(spread).length, 1);
  });

  test('a code with no link is passed over; the others are marked', async () => {
    const at = new Date(Date.UTC(2026, 11, 4, 13, 0));
    await touchSafetyCheckedAt(db.sql, [], at);
    await touchSafetyCheckedAt(db.sql, ['no-such-code', 't000', 't089'], at);
    const rows = await db.sql<{ code: string }[]>`
      SELECT code FROM links WHERE safety_checked_at = ${at} ORDER BY code`;
    assert.deepEqual(
      rows.map((r) => r.code),
      ['t000', 't089'],
    );
  });
});
