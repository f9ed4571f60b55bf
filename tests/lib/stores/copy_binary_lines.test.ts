import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { CopyBinaryLines } from '../../../lib/stores/copy_binary_lines.ts';

// The export reads each table as a binary COPY of one text column and writes the texts as lines. The stream here is
// Postgres's own, cut at every possible place: the lines must come out the same however it arrives.
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db.drop();
});

/** The raw bytes of `COPY (<select>) TO STDOUT (FORMAT binary)`. */
async function copyBytes(select: string): Promise<Buffer> {
  const stream = (await db.sql
    .unsafe(`COPY (${select}) TO STDOUT (FORMAT binary)`)
    .readable()) as unknown as Readable;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

function readAll(bytes: Buffer, cut: number): { text: string; rows: number } {
  const lines = new CopyBinaryLines(16);
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += cut) {
    lines.push(bytes.subarray(at, Math.min(bytes.length, at + cut)));
    if (lines.pending > 7) out.push(lines.take().lines);
  }
  lines.end();
  out.push(lines.take().lines);
  return { text: Buffer.concat(out).toString('utf8'), rows: lines.rows };
}

describe('binary COPY into lines', () => {
  test('the texts of a COPY, byte for byte, however the stream is cut', async () => {
    // JSON as row_to_json writes it: quotes, backslashes, Arabic, an emoji, an empty string, a long row.
    const select = `SELECT row_to_json(t)::text FROM (VALUES
        (1, 'plain'), (2, 'quote " and back\\slash'), (3, 'عاجل: خبر'), (4, '🙂 tab	and
newline'), (5, ''), (6, repeat('x', 5000))) AS t(id, title) ORDER BY id`;
    const expected = (await db.sql.unsafe<{ j: string }[]>(`SELECT j FROM (${select}) AS s(j)`))
      .map((r) => `${r.j}\n`)
      .join('');
    const bytes = await copyBytes(select);
    for (const cut of [1, 2, 3, 5, 6, 7, 19, 20, 64, 4999, bytes.length]) {
      assert.deepEqual(readAll(bytes, cut), { text: expected, rows: 6 }, `cut every ${cut} bytes`);
    }
    // No rows: the header and the trailer only.
    assert.deepEqual(readAll(await copyBytes('SELECT NULL::text WHERE false'), 3), { text: '', rows: 0 });
  });

  test('a stream that is not one non-null text column per row, or that stops early, is refused', async () => {
    const two = await copyBytes(`SELECT 'a'::text, 'b'::text`);
    assert.throws(() => readAll(two, two.length), /a row of 2 fields where one was expected/);
    const nul = await copyBytes('SELECT NULL::text');
    assert.throws(() => readAll(nul, nul.length), /a NULL where a line was expected/);
    const one = await copyBytes(`SELECT 'a'::text`);
    assert.throws(() => readAll(one.subarray(0, one.length - 2), 4), /ended before its trailer/);
    assert.throws(() => readAll(one.subarray(0, one.length - 3), 4), /ended before its trailer/);
    assert.throws(
      () => readAll(Buffer.concat([Buffer.from('COPY'), one.subarray(4)]), 64),
      /not a binary COPY stream/,
    );
  });
});
