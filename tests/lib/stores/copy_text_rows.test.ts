import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { openCopyIn } from '../../../lib/stores/copy_in.ts';
import { type CopyColumn, copyTextRow } from '../../../lib/stores/copy_text_rows.ts';
import { listCopyColumns } from '../../../lib/stores/escrow_store.ts';

// A restore writes exported JSON rows into tables as COPY text. Here they go through a real Postgres and come back
// out as row_to_json: every value must come back as it went in, and every way a COPY can fail must reach the caller.
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
  await db.sql`
    CREATE TABLE copy_probe (
      id      int PRIMARY KEY,
      label   text,
      flag    boolean,
      at      timestamptz,
      day     date,
      tags    text[],
      doc     jsonb,
      raw     bytea,
      amount  bigint
    )`;
});
after(async () => {
  await db.drop();
});

const NAMES = ['id', 'label', 'flag', 'at', 'day', 'tags', 'doc', 'raw', 'amount'];

/** Rows as row_to_json gives them back (UTC times), in id order. */
async function readBack(): Promise<Record<string, unknown>[]> {
  return db.sql.begin(async (tx) => {
    await tx`SET LOCAL timezone = 'UTC'`;
    const rows = await tx<{ row: Record<string, unknown> }[]>`
      SELECT row_to_json(t) AS row FROM copy_probe t ORDER BY id`;
    return rows.map((r) => r.row);
  }) as Promise<Record<string, unknown>[]>;
}

describe('COPY text rows', () => {
  test('every value comes back out of Postgres as it went in', async () => {
    const columns = await listCopyColumns(db.sql, 'copy_probe', NAMES);
    assert.deepEqual(
      columns.map((c) => c.kind),
      ['scalar', 'scalar', 'scalar', 'scalar', 'scalar', 'array', 'json', 'scalar', 'scalar'],
    );
    const awkward = 'back\\slash\ttab\nnewline\r\nCRLF "quoted" \\N \\. ,{} العربية 📰 \u2028';
    const rows: Record<string, unknown>[] = [
      {
        id: 1,
        label: awkward,
        flag: true,
        at: '2026-12-03T10:01:02.345678+00:00',
        day: '2026-12-03',
        tags: ['plain', awkward, 'with,comma', '{braces}', 'NULL', ''],
        doc: { text: awkward, nested: [1, 2.5, null, { deep: 'a\\b' }], ok: false, '2': 'integer-like key' },
        raw: '\\x00ff5c0a',
        amount: 9_007_199_254_740_991,
      },
      { id: 2, label: '', flag: false, at: null, day: null, tags: [], doc: [], raw: null, amount: -1 },
      { id: 3, label: null, flag: null, tags: [null, 'x'], doc: 'just a string', amount: 0 },
    ];
    await db.sql.begin(async (tx) => {
      const copy = await openCopyIn(tx, 'copy_probe', NAMES);
      // Cut in the middle of a line: COPY reads a stream, not messages.
      const text = rows.map((row) => copyTextRow(row, columns)).join('');
      await copy.write(text.slice(0, 37));
      await copy.write(text.slice(37));
      await copy.end();
    });
    const back = await readBack();
    assert.deepEqual(back, [rows[0], rows[1], { ...rows[2], at: null, day: null, raw: null }]);
    await db.sql`TRUNCATE copy_probe`;
  });

  test('a value its column cannot hold is named before anything is sent', () => {
    const columns: CopyColumn[] = [
      { name: 'label', kind: 'scalar' },
      { name: 'tags', kind: 'array' },
    ];
    assert.throws(
      () => copyTextRow({ label: { a: 1 } }, columns),
      /label: expected a string, a number or a boolean, not an object/,
    );
    assert.throws(() => copyTextRow({ tags: 'a' }, columns), /tags: expected a JSON array/);
    assert.throws(() => copyTextRow({ tags: [{}] }, columns), /tags: an array element is an object/);
  });

  test('a failure while the rows stream, at their end, or on purpose rejects, and the connection lives on', async () => {
    const columns = await listCopyColumns(db.sql, 'copy_probe', ['id', 'label']);
    const lines = (ids: readonly unknown[]) =>
      ids.map((id) => copyTextRow({ id, label: `l${id}` }, columns)).join('');
    // A value Postgres cannot read, with more rows after it: the COPY fails while it is still being written.
    const many = Array.from({ length: 50_000 }, (_, i) => i + 10);
    await assert.rejects(
      db.sql.begin(async (tx) => {
        const copy = await openCopyIn(tx, 'copy_probe', ['id', 'label']);
        await copy.write(lines([1, 2, 'three']));
        for (let at = 0; at < many.length; at += 1000) await copy.write(lines(many.slice(at, at + 1000)));
        await copy.end();
      }),
      (error: Error & { where?: string }) =>
        /invalid input syntax for type integer: "three"/.test(error.message) &&
        /line 3\b/.test(error.where ?? ''),
    );
    // The same key twice in the last rows: Postgres finds it only after the data's end. `end` must reject, not
    // wait for ever (a known postgres.js gap that openCopyIn covers).
    await assert.rejects(
      db.sql.begin(async (tx) => {
        const copy = await openCopyIn(tx, 'copy_probe', ['id', 'label']);
        await copy.write(lines([1, 2, 2]));
        await copy.end();
      }),
      /duplicate key value violates unique constraint "copy_probe_pkey"/,
    );
    // Stopped by the caller (a refused file, a cancelled restore): the COPY fails with the reason given.
    await assert.rejects(
      db.sql.begin(async (tx) => {
        const copy = await openCopyIn(tx, 'copy_probe', ['id', 'label']);
        await copy.write(lines([1, 2]));
        const reason = new Error('stopped by the restore');
        await copy.abort(reason);
        throw reason;
      }),
      /stopped by the restore/,
    );
    const [left] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM copy_probe`;
    assert.equal(left!.n, 0, 'nothing of the failed COPYs committed');
    // Each transaction rolled back and gave its connection back in working order.
    await Promise.all(Array.from({ length: 12 }, () => db.sql`SELECT 1`));
  });
});
