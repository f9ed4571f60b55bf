import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { seedLinkStates } from '../../../devkit/harness/link_states.ts';
import { ESCROW_TABLES, type EscrowTable, withEscrowSnapshot } from '../../../lib/stores/escrow_store.ts';

// The export reads each table in pages along its primary key (escrow_store.ts). Its lines must be exactly those
// of one ordered statement over the table, whatever the page size: a key compared with the wrong type, collation or
// rounding would skip or repeat rows at a page's edge, and a key that is not unique would lose its ties there.
let db: TestDatabase;

before(async () => {
  db = await createTestDatabase();
  await seedLinkStates(db.sql, { count: 240, prefix: 'o', extras: true });
  // Many rows per code in the composite keys, with hours a microsecond apart: every key column decides somewhere.
  await db.sql`
    INSERT INTO click_counts (code, hour, kind, country, referrer_host, clicks)
    SELECT 'o' || c, timestamptz '2026-11-20 10:00:00.123456+00' + make_interval(secs => h * 0.000001),
           k, co, r, 1
    FROM generate_series(1, 12) AS c, generate_series(0, 2) AS h, unnest(ARRAY['human', 'qr']) AS k,
         unnest(ARRAY['', 'DE', 'EG']) AS co, unnest(ARRAY['', 't.co']) AS r
    ON CONFLICT DO NOTHING`;
  await db.sql`
    INSERT INTO click_families (code, day, browser, os, clicks)
    SELECT 'o' || c, date '2026-11-20' + d, b, o, 1
    FROM generate_series(1, 12) AS c, generate_series(0, 2) AS d, unnest(ARRAY['chrome', 'safari']) AS b,
         unnest(ARRAY['android', 'ios', 'windows']) AS o`;
  await db.sql`
    INSERT INTO link_last_clicks (code, last_clicked_at)
    SELECT 'o' || i, timestamptz '2026-11-20 10:00:00+00' + make_interval(mins => i) FROM generate_series(1, 30) AS i`;
  await db.sql`
    INSERT INTO blocklist (pattern, kind, reason, created_by)
    SELECT p, 'host', 'test', 'admin'
    FROM unnest(ARRAY['evil.example', 'Evil.example', 'a-b.example', 'ab.example', 'مثال.example', 'z.example',
                      'éa.example']) AS p`;
  await db.sql`
    INSERT INTO webhook_endpoints (url, event_types, secret, created_by)
    SELECT 'https://hooks.example.com/' || i, ARRAY['link.created'], 'whsec_c2VjcmV0', 'apikey:1'
    FROM generate_series(1, 9) AS i`;
});
after(async () => {
  await db.drop();
});

describe('the escrow export’s order', () => {
  test('every exported table is ordered by its primary key, column for column, ascending', async () => {
    for (const spec of ESCROW_TABLES) {
      const [row] = await db.sql<{ columns: string[]; descending: boolean }[]>`
        SELECT array_agg(a.attname::text ORDER BY k.n) AS columns,
               bool_or(i.indoption[k.n - 1] & 1 = 1) AS descending
        FROM pg_index i
        CROSS JOIN unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
        WHERE i.indrelid = ${spec.table}::regclass AND i.indisprimary`;
      assert.deepEqual(row?.columns, [...spec.orderBy], spec.table);
      assert.equal(row?.descending, false, spec.table);
    }
  });

  test('pages along the key give the lines of one ordered statement, byte for byte, at any page size', async () => {
    const read = (table: EscrowTable, batch: number, most = Number.POSITIVE_INFINITY) =>
      withEscrowSnapshot(db.sql, async (snapshot) => {
        const lines: string[] = [];
        let pages = 0;
        for await (const page of snapshot.streamRows(table, batch)) {
          lines.push(...page);
          pages++;
          // A page that starts before the last key read would repeat rows for ever: stop and show it.
          if (lines.length > most) break;
        }
        return { lines, pages };
      });
    for (const spec of ESCROW_TABLES) {
      // One page larger than the table is the single statement `… ORDER BY <key>` with no key to start after.
      const whole = await read(spec.table, 1_000_000);
      const [count] = await db.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${spec.table}`);
      assert.equal(whole.lines.length, count!.n, spec.table);
      assert.ok(whole.lines.length > 1, `${spec.table} has rows to order`);
      for (const batch of [1, 7, whole.lines.length, whole.lines.length - 1]) {
        const paged = await read(spec.table, batch, whole.lines.length);
        assert.deepEqual(paged.lines, whole.lines, `${spec.table}, pages of ${batch}`);
        assert.equal(paged.pages, Math.ceil(whole.lines.length / batch), `${spec.table}, pages of ${batch}`);
      }
    }
  });
});
