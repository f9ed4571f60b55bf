import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createSql, type Sql } from '../../lib/stores/sql.ts';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../scripts/embedded_postgres.ts';

// `npm start` serves embedded PGlite (one session) to a postgres.js pool of several connections. Each client's
// extended-protocol batch (Parse/Bind/Execute/Sync) and each transaction must run alone on that session, or one
// client binds another's unnamed statement: errors, or silently someone else's rows.
let dir: string;
let pg: EmbeddedPostgres;
let sql: Sql;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lifeline-pglite-'));
  pg = await startEmbeddedPostgres(dir);
  sql = createSql({ url: pg.url, max: 8, prepare: false, applicationName: 'embedded-test' });
});
after(async () => {
  await sql.end({ timeout: 5 });
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('embedded Postgres (PGlite over the wire)', () => {
  test('concurrent queries of different shapes on a pool of 8 each get their own answer', async () => {
    const results = await Promise.all(
      Array.from({ length: 600 }, async (_, i) => {
        if (i % 3 === 0) return [i, (await sql`SELECT ${i}::int AS a`)[0]!.a];
        if (i % 3 === 1) return [i, (await sql`SELECT ${String(i)}::text AS b, ${i}::int AS a`)[0]!.a];
        return [i, (await sql`SELECT ${i}::int + ${0}::int + ${0}::int AS a`)[0]!.a];
      }),
    );
    for (const [asked, got] of results) assert.equal(got, asked);
  });

  test('concurrent transactions stay whole: each sees only its own writes, and a rollback leaves nothing', async () => {
    await sql`CREATE TABLE IF NOT EXISTS t (k int, v int)`;
    await Promise.all(
      Array.from({ length: 40 }, (_, k) =>
        sql
          .begin(async (tx) => {
            await tx`INSERT INTO t VALUES (${k}, 1)`;
            await tx`INSERT INTO t VALUES (${k}, 2)`;
            const [row] = await tx`SELECT count(*)::int AS n FROM t WHERE k = ${k}`;
            assert.equal(row!.n, 2);
            if (k % 2 === 1) throw new Error('roll back');
          })
          .catch((error: Error) => assert.equal(error.message, 'roll back')),
      ),
    );
    const [row] = await sql`SELECT count(*)::int AS n, count(DISTINCT k)::int AS keys FROM t`;
    assert.deepEqual({ ...row }, { n: 40, keys: 20 });
  });

  test('a client that disconnects mid-transaction does not block the others', async () => {
    const other = createSql({ url: pg.url, max: 1, prepare: false, applicationName: 'quitter' });
    await other.unsafe('BEGIN').catch(() => {});
    await other.end({ timeout: 0 });
    const [row] = await sql`SELECT 1 AS one`;
    assert.equal(row!.one, 1);
  });
});
