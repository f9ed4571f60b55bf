import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { touchSafetyCheckedAt } from '../../../lib/stores/link_lifecycle_store.ts';

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
      await touchSafetyCheckedAt(db.sql, [...codes].reverse(), at);
      const checked = await db.sql<{ code: string; at: Date }[]>`
        SELECT code, safety_checked_at AS at FROM links WHERE code = ANY(${codes}::text[])`;
      assert.equal(checked.length, codes.length);
      for (const row of checked) assert.equal(row.at.getTime(), at.getTime(), `${row.code} in pass ${pass}`);
      const now = await pages(codes);
      const moved = codes.filter((c) => now.get(c) !== before.get(c));
      assert.deepEqual(moved, [], `pass ${pass}: rows that left their page`);
    }
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
