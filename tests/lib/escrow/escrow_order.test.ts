import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { seedLinkStates } from '../../../devkit/harness/link_states.ts';
import {
  ESCROW_TABLES,
  type EscrowTable,
  escrowSelect,
  steerToKeyOrder,
  withEscrowSnapshot,
} from '../../../lib/stores/escrow_store.ts';

// The export reads each table in one binary COPY along its primary key (escrow_store.ts). Its lines must be
// exactly those of one ordered statement over the table, whatever size of piece they are handed over in; and a
// reader that stops early must not leave the snapshot's connection in the middle of a COPY.
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

  test('each table is read by walking its primary key, never by a sort, whatever its size', async () => {
    type PlanNode = { 'Node Type': string; 'Index Name'?: string; Plans?: PlanNode[] };
    const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
    for (const spec of ESCROW_TABLES) {
      const plan = await db.sql.begin(async (tx) => {
        // These tables are small: left to its costs, the planner reads them in a sequential scan and sorts.
        const [free] = await tx.unsafe(`EXPLAIN (FORMAT JSON) ${await escrowSelect(tx, spec.table)}`);
        await steerToKeyOrder(tx);
        const [steered] = await tx.unsafe(`EXPLAIN (FORMAT JSON) ${await escrowSelect(tx, spec.table)}`);
        const read = (row: unknown) =>
          nodes((row as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan);
        return { free: read(free), steered: read(steered) };
      });
      const types = plan.steered.map((n) => n['Node Type']);
      assert.ok(!types.some((t) => /Sort|Seq Scan/.test(t)), `${spec.table}: ${types.join(' > ')}`);
      assert.ok(
        plan.steered.some(
          (n) => /^Index (Only )?Scan$/.test(n['Node Type']) && n['Index Name'] === `${spec.table}_pkey`,
        ),
        `${spec.table}: ${types.join(' > ')}`,
      );
      if (spec.table === 'links')
        assert.ok(
          plan.free.some((n) => n['Node Type'] === 'Sort'),
          'the test can fail',
        );
    }
  });

  test('the lines are those of one ordered statement, byte for byte, in pieces of any size', async () => {
    const read = (table: EscrowTable, bytes: number) =>
      withEscrowSnapshot(db.sql, async (snapshot) => {
        const pieces: Buffer[] = [];
        let rows = 0;
        for await (const piece of snapshot.streamLines(table, bytes)) {
          pieces.push(piece.lines);
          rows += piece.rows;
        }
        return { text: Buffer.concat(pieces).toString('utf8'), rows, pieces: pieces.length };
      });
    for (const spec of ESCROW_TABLES) {
      const source =
        spec.table === 'webhook_endpoints'
          ? `(SELECT ${(await snapshotColumns(spec.table)).join(', ')} FROM webhook_endpoints)`
          : spec.table;
      const expected = await db.sql.unsafe<{ j: string }[]>(
        `SELECT row_to_json(t)::text AS j FROM ${source} t ORDER BY ${spec.orderBy.map((c) => `t.${c}`).join(', ')}`,
      );
      assert.ok(expected.length > 1, `${spec.table} has rows to order`);
      const text = expected.map((r) => `${r.j}\n`).join('');
      for (const bytes of [1, 200, 1 << 20]) {
        const got = await read(spec.table, bytes);
        assert.equal(got.text, text, `${spec.table}, pieces of ${bytes} bytes`);
        assert.equal(got.rows, expected.length, spec.table);
        if (bytes === 1 && spec.table === 'links') assert.ok(got.pieces > 1, 'links: in several pieces');
      }
    }
  });

  test('a reader that stops part-way leaves the snapshot usable', async () => {
    const blocklistLines = await withEscrowSnapshot(db.sql, async (snapshot) => {
      for await (const piece of snapshot.streamLines('links', 1)) {
        assert.ok(piece.rows >= 1 && piece.rows < 240);
        break;
      }
      const lines: string[] = [];
      for await (const piece of snapshot.streamLines('blocklist', 1 << 20))
        lines.push(piece.lines.toString());
      return lines.join('').split('\n').filter(Boolean).length;
    });
    assert.equal(blocklistLines, 7);
  });
});

/** A table's exported columns (the webhook endpoints' secrets left out), as the snapshot lists them. */
function snapshotColumns(table: EscrowTable): Promise<string[]> {
  return withEscrowSnapshot(db.sql, (snapshot) => snapshot.columnsOf(table));
}
