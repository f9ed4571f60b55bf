import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { eventually } from '../../devkit/harness/harness.ts';
import { createLayeredResolver } from '../../lib/redirect/layered_resolver.ts';
import { createPostgresInvalidationBus } from '../../lib/redirect/postgres_invalidation_bus.ts';
import { createMetrics } from '../../lib/shared/metrics.ts';
import { insertLink } from '../../lib/stores/link_store.ts';
import { migrateDatabase } from '../../lib/stores/migrate.ts';
import { createSql, type Sql } from '../../lib/stores/sql.ts';
import {
  type EmbeddedPostgres,
  parseListenStatement,
  startEmbeddedPostgres,
} from '../../scripts/embedded_postgres.ts';

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

  test('named prepared statements of several pools live side by side, and go when their pool closes', async () => {
    const named = async () =>
      (await sql`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name <> ''`)[0]!.n as number;
    const before = await named();
    const pools = [0, 1].map(() => createSql({ url: pg.url, max: 4, applicationName: 'prepared' }));
    const results = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const db = pools[i % 2]!;
        if (i % 4 < 2) return [i, (await db`SELECT ${i}::int AS a`)[0]!.a];
        return [i, (await db`SELECT ${String(i)}::text AS b, ${i}::int AS a`)[0]!.a];
      }),
    );
    for (const [asked, got] of results) assert.equal(got, asked);
    assert.ok((await named()) > before, 'the pools prepared named statements');
    await Promise.all(pools.map((db) => db.end({ timeout: 5 })));
    await eventually(async () => ((await named()) === before ? true : undefined), {
      what: 'the closed pools’ statements to be deallocated',
    });
  });
});

describe('LISTEN/NOTIFY through the front (one PGlite session, many sockets)', () => {
  /** A connection that records every notification it is sent, whatever the channel. */
  function recorder() {
    const heard: string[] = [];
    // `onnotify` is what postgres.js's own listen() sets: every NotificationResponse the socket is sent.
    const options: Record<string, unknown> = {
      max: 1,
      prepare: false,
      onnotice: () => {},
      onnotify: (channel: string, payload: string) => heard.push(`${channel}:${payload}`),
    };
    const db = postgres(pg.url, options as postgres.Options<Record<string, never>>);
    return { db, heard };
  }

  test('parses LISTEN and UNLISTEN as Postgres folds them', () => {
    assert.deepEqual(parseListenStatement('listen "Mixed""Case"'), { listen: true, channel: 'Mixed"Case' });
    assert.deepEqual(parseListenStatement(' LISTEN Folded ;'), { listen: true, channel: 'folded' });
    assert.deepEqual(parseListenStatement('unlisten *'), { listen: false, channel: '*' });
    assert.equal(parseListenStatement('SELECT 1'), undefined);
    assert.equal(parseListenStatement('listen a; select 1'), undefined);
  });

  test('a notification reaches the socket that listens, and not one that does not', async () => {
    const listener = createSql({ url: pg.url, max: 2, applicationName: 'listener' });
    const bystander = recorder();
    const heard: string[] = [];
    try {
      await listener.listen('fan_one', (payload) => heard.push(payload));
      await bystander.db`SELECT 1`;
      await sql`SELECT pg_notify('fan_one', 'from another socket')`;
      await bystander.db`SELECT pg_notify('fan_one', 'from the bystander')`;
      await eventually(async () => (heard.length === 2 ? true : undefined), { what: 'two notifications' });
      assert.deepEqual(heard.sort(), ['from another socket', 'from the bystander']);
      assert.deepEqual(bystander.heard, [], 'a socket that does not LISTEN hears nothing');
    } finally {
      await listener.end({ timeout: 5 });
      await bystander.db.end({ timeout: 5 });
    }
  });

  test('two listeners on one channel both hear it; after one UNLISTENs the other still does', async () => {
    const first = createSql({ url: pg.url, max: 1, applicationName: 'first' });
    const second = createSql({ url: pg.url, max: 1, applicationName: 'second' });
    const heardFirst: string[] = [];
    const heardSecond: string[] = [];
    try {
      await first.listen('fan_two', (payload) => heardFirst.push(payload));
      const { unlisten } = await second.listen('fan_two', (payload) => heardSecond.push(payload));
      await sql`SELECT pg_notify('fan_two', 'both')`;
      await eventually(async () => (heardFirst.length === 1 && heardSecond.length === 1 ? true : undefined), {
        what: 'both listeners to hear it',
      });
      await unlisten(); // UNLISTEN on the shared session: the front listens again for `first`
      await sql`SELECT pg_notify('fan_two', 'first only')`;
      await eventually(async () => (heardFirst.length === 2 ? true : undefined), {
        what: 'the remaining listener to hear the second notification',
      });
      assert.deepEqual(heardFirst, ['both', 'first only']);
      assert.deepEqual(heardSecond, ['both']);
    } finally {
      await first.end({ timeout: 5 });
      await second.end({ timeout: 5 });
    }
  });

  test('a socket that closes while listening leaves the others listening and nothing broken', async () => {
    const staying = createSql({ url: pg.url, max: 1, applicationName: 'staying' });
    const leaving = recorder();
    const heard: string[] = [];
    try {
      await staying.listen('fan_three', (payload) => heard.push(payload));
      await leaving.db`LISTEN fan_three`;
      await leaving.db.end({ timeout: 0 });
      await sql`SELECT pg_notify('fan_three', 'after the close')`;
      await eventually(async () => (heard.length === 1 ? true : undefined), { what: 'the notification' });
      assert.deepEqual(heard, ['after the close']);
      // Nobody listens any more: notifying still works, and the other clients are unaffected.
      await staying.end({ timeout: 5 });
      await sql`SELECT pg_notify('fan_three', 'to nobody')`;
      const [row] = await sql`SELECT 1 AS one`;
      assert.equal(row!.one, 1);
    } finally {
      await staying.end({ timeout: 5 });
    }
  });

  test('the invalidation bus over the front: a code published by one pool reaches the subscriber of another', async () => {
    const webSql = createSql({ url: pg.url, max: 2, applicationName: 'web' });
    const workerSql = createSql({ url: pg.url, max: 2, applicationName: 'worker' });
    const webBus = createPostgresInvalidationBus({ sql: webSql });
    const workerBus = createPostgresInvalidationBus({ sql: workerSql });
    const codes: string[] = [];
    let resyncs = 0;
    try {
      webBus.subscribe({ onCode: (code) => codes.push(code), onResync: () => resyncs++ });
      await eventually(async () => (resyncs > 0 ? true : undefined), { what: 'the LISTEN' });
      await workerBus.publish('abc12');
      await workerBus.publishMany!(['def34', 'ghi56']);
      await eventually(async () => (codes.length === 3 ? true : undefined), { what: 'three codes' });
      assert.deepEqual(codes, ['abc12', 'def34', 'ghi56']);
    } finally {
      await webBus.close();
      await workerBus.close();
      await webSql.end({ timeout: 5 });
      await workerSql.end({ timeout: 5 });
    }
  });

  test('a refresh inside an open transaction announces at commit, without a second session the transaction holds up', async () => {
    await migrateDatabase(pg.url);
    const webSql = createSql({ url: pg.url, max: 2, applicationName: 'web' });
    const workerSql = createSql({ url: pg.url, max: 2, applicationName: 'worker' });
    const webBus = createPostgresInvalidationBus({ sql: webSql });
    const resolver = createLayeredResolver({
      sql: workerSql,
      metrics: createMetrics(),
      bus: createPostgresInvalidationBus({ sql: workerSql }),
      cacheMax: 0,
      cacheTtlMs: 0,
      negativeTtlMs: 0,
      storeTimeoutMs: 1_000,
      postgresConcurrency: 1,
    });
    const codes: string[] = [];
    let resyncs = 0;
    try {
      webBus.subscribe({ onCode: (code) => codes.push(code), onResync: () => resyncs++ });
      await eventually(async () => (resyncs > 0 ? true : undefined), { what: 'the LISTEN' });
      let heardBeforeCommit: string[] | undefined;
      // With one PGlite session, an announcement sent on another connection would wait for this transaction to
      // end, and the transaction for it: the front would hang. Sent through the transaction, it goes at commit.
      await Promise.race([
        workerSql.begin(async (tx) => {
          await insertLink(tx, {
            code: 'txref1',
            targetUrl: 'https://example.com/tx',
            status: 'active',
            origin: 'api',
            owner: 't',
          });
          await resolver.refresh('txref1', tx);
          await new Promise((r) => setTimeout(r, 200));
          heardBeforeCommit = [...codes];
        }),
        new Promise((_, reject) => setTimeout(() => reject(new Error('the transaction hung')), 10_000)),
      ]);
      assert.deepEqual(heardBeforeCommit, [], 'nothing is announced before the commit');
      await eventually(async () => (codes.includes('txref1') ? true : undefined), {
        what: 'the announcement',
      });
    } finally {
      await resolver.close();
      await webBus.close();
      await webSql.end({ timeout: 5 });
      await workerSql.end({ timeout: 5 });
    }
  });

  test("the resolver's batched lookup (code = ANY of an array parameter) answers over the front, unprepared", async () => {
    await migrateDatabase(pg.url);
    const codes = Array.from({ length: 40 }, (_, i) => `emb${i}`);
    for (const [i, code] of codes.entries()) {
      await insertLink(sql, {
        code,
        targetUrl: `https://example.com/e/${i}`,
        status: 'active',
        origin: 'api',
        owner: 't',
      });
    }
    const metrics = createMetrics();
    const resolver = createLayeredResolver({
      sql,
      metrics,
      cacheMax: 0,
      cacheTtlMs: 0,
      negativeTtlMs: 0,
      storeTimeoutMs: 1_000,
      postgresConcurrency: 1,
    });
    const asked = [...codes, 'emb-none'];
    const answers = await Promise.all(asked.map((code) => resolver.resolve(code)));
    for (const [i, answer] of answers.entries()) {
      assert.equal(answer?.url, i < 40 ? `https://example.com/e/${i}` : undefined, asked[i]);
    }
    const { values } = await metrics.lookupQueries.get();
    const batches = values.find((v) => v.labels.shape === 'batch')?.value ?? 0;
    assert.ok(batches >= 1, 'one connection for 41 lookups: the queued ones went together');
    await resolver.close();
  });
});
