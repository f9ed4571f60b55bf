import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { eventually } from '../../../devkit/harness/harness.ts';
import { NO_AGENT } from '../../../lib/clicks/classify_click.ts';
import { type Click, type ClickBufferOptions, createClickBuffer } from '../../../lib/clicks/click_buffer.ts';
import { createLogger } from '../../../lib/shared/logger.ts';
import { createMetrics, type Metrics } from '../../../lib/shared/metrics.ts';
import { addClickCounts, LAST_CLICK_PRECISION_MINUTES } from '../../../lib/stores/click_counts_store.ts';
import { createSql, type Sql } from '../../../lib/stores/sql.ts';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp_proxy.ts';

// The click buffer against the real Postgres, reached through a TCP proxy this test owns and can cut, so a
// database outage is real (connections reset and refused) without touching the shared server.

let db: TestDatabase;
let proxy: TcpProxy;
let viaProxy: Sql;
const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'silent', name: 'test' });
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 15, 10, 0, 0);

before(async () => {
  db = await createTestDatabase();
  const url = new URL(db.url);
  proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(url.port || 5432) });
  url.port = String(proxy.port);
  viaProxy = createSql({ url: url.toString(), max: 4, applicationName: 'lifeline-test-clicks' });
  await db.sql`
    INSERT INTO links (code, target_url, status, safety, origin, owner)
    SELECT 'c' || i, 'https://example.com/' || i, 'active', 'clean', 'api', 'test'
    FROM generate_series(0, 299) AS i`;
});
after(async () => {
  await viaProxy?.end({ timeout: 1 });
  await proxy?.close();
  await db?.drop();
});

/** A buffer on the test database that flushes only when told to (options override the defaults). */
function newBuffer(options: Partial<ClickBufferOptions> = {}) {
  return createClickBuffer({
    sql: db.sql,
    metrics: createMetrics(),
    logger,
    flushIntervalMs: 600_000,
    maxKeys: 1000,
    ...options,
  });
}

function click(code: string, overrides: Partial<Click> = {}): Click {
  return { code, kind: 'human', country: '', referrerHost: '', atMs: T0, agent: NO_AGENT, ...overrides };
}

async function countsOf(codes: string[]) {
  return db.sql<
    { code: string; hour: Date; kind: string; country: string; referrerHost: string; clicks: number }[]
  >`
    SELECT code, hour, kind, country, referrer_host AS "referrerHost", clicks FROM click_counts
    WHERE code = ANY(${db.sql.array(codes)}) ORDER BY code, hour, kind, country, referrer_host`;
}

async function total(codes: string[]): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`
    SELECT coalesce(sum(clicks), 0)::bigint AS n FROM click_counts WHERE code = ANY(${db.sql.array(codes)})`;
  return row!.n;
}

function dropped(metrics: Metrics): Promise<number> {
  return metrics.clicksDropped.get().then((m) => m.values[0]?.value ?? 0);
}

describe('addClickCounts', () => {
  test('one batch id counts once: a replayed batch (its commit was not acknowledged) changes nothing', async () => {
    const id = crypto.randomUUID();
    const rows = [
      {
        code: 'c270',
        hourMs: T0,
        kind: 'human' as const,
        country: 'SE',
        referrerHost: '',
        clicks: 4,
        lastClickMs: T0,
      },
    ];
    assert.equal(await addClickCounts(db.sql, id, rows), true);
    assert.equal(await addClickCounts(db.sql, id, rows), false);
    assert.equal(await addClickCounts(db.sql, crypto.randomUUID(), rows), true);
    assert.equal(await total(['c270']), 8);
  });

  test('rows of one key in a batch become one; strings reach Postgres exactly (JSON escaping); input left in order', async () => {
    const row = (referrerHost: string, clicks: number) => ({
      code: 'c290',
      hourMs: T0,
      kind: 'human' as const,
      country: '',
      referrerHost,
      clicks,
      lastClickMs: T0 + clicks,
    });
    const odd = 'a"b\\c\u00e9\n\u2028.example';
    const rows = [row('z.example', 1), row(odd, 2), row('z.example', 3), row('', 4)];
    const before = rows.map((r) => r.clicks);
    assert.equal(await addClickCounts(db.sql, crypto.randomUUID(), rows), true);
    assert.deepEqual(
      rows.map((r) => r.clicks),
      before,
      'addClickCounts copies before it sorts',
    );
    const stored = await countsOf(['c290']);
    assert.deepEqual(
      stored.map((r) => [r.referrerHost, r.clicks]),
      [
        ['', 4],
        [odd, 2],
        ['z.example', 4],
      ],
    );
    const [last] = await db.sql<
      { at: Date }[]
    >`SELECT last_clicked_at AS at FROM link_last_clicks WHERE code = 'c290'`;
    assert.equal(last!.at.getTime(), T0 + 4);
  });

  test('the last click time moves only when it is LAST_CLICK_PRECISION_MINUTES behind (clicks always count)', async () => {
    const precision = LAST_CLICK_PRECISION_MINUTES * 60_000;
    const lastClicked = async () => {
      const [row] = await db.sql<
        { at: Date | null }[]
      >`SELECT last_clicked_at AS at FROM link_last_clicks WHERE code = 'c271'`;
      return row?.at?.getTime() ?? null;
    };
    const add = (atMs: number) =>
      addClickCounts(db.sql, crypto.randomUUID(), [
        {
          code: 'c271',
          hourMs: T0,
          kind: 'human',
          country: '',
          referrerHost: '',
          clicks: 1,
          lastClickMs: atMs,
        },
      ]);
    await add(T0);
    assert.equal(await lastClicked(), T0, 'never clicked: set at once');
    await add(T0 + precision - 1);
    assert.equal(await lastClicked(), T0, 'within the precision: left as is');
    await add(T0 + precision);
    assert.equal(await lastClicked(), T0 + precision, 'a precision behind: moved');
    await add(T0 + 1);
    assert.equal(await lastClicked(), T0 + precision, 'never moves backwards');
    assert.equal(await total(['c271']), 4);
  });
});

describe('click buffer', () => {
  test('aggregates by (code, hour, kind, country, referrer), upserts, and moves the last click time forward', async () => {
    const metrics = createMetrics();
    const buffer = newBuffer({ metrics });
    for (let i = 0; i < 5; i++) buffer.record(click('c1', { atMs: T0 + i * 1000 }));
    buffer.record(click('c1', { kind: 'qr', country: 'DE', referrerHost: 't.co', atMs: T0 + 10 }));
    buffer.record(click('c1', { atMs: T0 + HOUR + 5 })); // the next hour
    buffer.record(click('c2', { kind: 'bot' }));
    assert.equal(buffer.pendingKeys, 4);
    await buffer.flush();
    assert.equal(buffer.pendingKeys, 0);
    // A second flush adds to the same rows rather than inserting new ones.
    buffer.record(click('c1', { atMs: T0 + 20 }));
    await buffer.flush();
    await buffer.close();
    const rows = await countsOf(['c1', 'c2']);
    assert.deepEqual(
      rows.map((r) => [r.code, r.hour.getTime() - T0, r.kind, r.country, r.referrerHost, r.clicks]),
      [
        ['c1', 0, 'human', '', '', 6],
        ['c1', 0, 'qr', 'DE', 't.co', 1],
        ['c1', HOUR, 'human', '', '', 1],
        ['c2', 0, 'bot', '', '', 1],
      ],
    );
    const links = await db.sql<{ code: string; at: Date | null }[]>`
      SELECT l.code, c.last_clicked_at AS at FROM links AS l LEFT JOIN link_last_clicks AS c USING (code)
      WHERE l.code IN ('c1', 'c2', 'c3') ORDER BY l.code`;
    assert.deepEqual(
      links.map((l) => [l.code, l.at?.getTime() ?? null]),
      [
        ['c1', T0 + HOUR + 5],
        ['c2', T0],
        ['c3', null],
      ],
    );
  });

  test('a code whose last click time it moved lately is not sent to be moved again within the precision', async () => {
    const precision = LAST_CLICK_PRECISION_MINUTES * 60_000;
    const buffer = newBuffer();
    const lastClicked = async () => {
      const [row] = await db.sql<
        { at: Date | null }[]
      >`SELECT last_clicked_at AS at FROM link_last_clicks WHERE code = 'c273'`;
      return row?.at?.getTime() ?? null;
    };
    buffer.record(click('c273', { atMs: T0 }));
    await buffer.flush();
    assert.equal(await lastClicked(), T0);
    // Cleared behind the buffer's back: only a batch that asks to move it would set it again.
    await db.sql`DELETE FROM link_last_clicks WHERE code = 'c273'`;
    buffer.record(click('c273', { atMs: T0 + precision - 1 }));
    await buffer.flush();
    assert.equal(await lastClicked(), null, 'within the precision: not asked');
    buffer.record(click('c273', { atMs: T0 + precision }));
    await buffer.flush();
    assert.equal(await lastClicked(), T0 + precision, 'a precision later: asked and moved');
    await buffer.close();
    assert.equal(await total(['c273']), 3);
  });

  test('a cell counts like record: mixed with record() and across kinds, hours and flushes, one row per key', async () => {
    const buffer = newBuffer();
    const cell = buffer.cell('c274');
    for (let i = 0; i < 4; i++) buffer.recordInCell(cell, 'human', '', '', T0 + i, NO_AGENT);
    // Another key for the same code: the running count moves into the buffer, the cell counts the new key.
    buffer.recordInCell(cell, 'qr', '', '', T0 + 10, NO_AGENT);
    buffer.recordInCell(cell, 'human', 'SE', 'news.example', T0 + 11, NO_AGENT);
    buffer.recordInCell(cell, 'human', '', '', T0 + 12, NO_AGENT);
    // record() for the same code and key as the cell's running count: record() counts in a cell of its own
    // (it cannot know the caller's), so the key is held twice until the flush merges them into one row.
    buffer.record(click('c274', { atMs: T0 + 13 }));
    // The next hour: the old hour's count is kept apart.
    buffer.recordInCell(cell, 'human', '', '', T0 + HOUR + 1, NO_AGENT);
    buffer.recordInCell(cell, 'human', '', '', T0 + HOUR + 2, NO_AGENT);
    assert.equal(
      buffer.pendingKeys,
      5,
      "the hour's 3 keys in the buffer, record()'s cell, the cell's running count",
    );
    await buffer.flush();
    assert.equal(buffer.pendingKeys, 0);
    // The same cell after a flush counts into the next batch.
    for (let i = 0; i < 3; i++) buffer.recordInCell(cell, 'human', '', '', T0 + HOUR + 3, NO_AGENT);
    assert.equal(buffer.pendingKeys, 1);
    await buffer.close();
    const rows = await countsOf(['c274']);
    assert.deepEqual(
      rows.map((r) => [r.hour.getTime() - T0, r.kind, r.country, r.referrerHost, r.clicks]),
      [
        [0, 'human', '', '', 6],
        [0, 'human', 'SE', 'news.example', 1],
        [0, 'qr', '', '', 1],
        [HOUR, 'human', '', '', 5],
      ],
    );
    const [link] = await db.sql<
      { at: Date }[]
    >`SELECT last_clicked_at AS at FROM link_last_clicks WHERE code = 'c274'`;
    // The first flush's latest click; the second's is within LAST_CLICK_PRECISION_MINUTES of it.
    assert.equal(link!.at.getTime(), T0 + HOUR + 2);
  });

  test('cells count towards maxKeys: a new running count with no room is dropped and counted', async () => {
    const metrics = createMetrics();
    // (Batches of the default 250 rows: an early flush starts only at 250 keys, so nothing leaves the buffer here.)
    const buffer = newBuffer({ metrics, maxKeys: 4 });
    const cells = ['c275', 'c276', 'c277', 'c278', 'c279'].map((code) => buffer.cell(code));
    for (const cell of cells) buffer.recordInCell(cell, 'human', '', '', T0, NO_AGENT);
    assert.equal(buffer.pendingKeys, 4);
    assert.equal(await dropped(metrics), 1);
    // Cells already counting keep counting.
    buffer.recordInCell(cells[0]!, 'human', '', '', T0, NO_AGENT);
    await buffer.close();
    assert.equal(await total(['c275']), 2);
    assert.equal(await total(['c279']), 0);
  });

  test('a code with many aggregates (countries × referrers) keeps them apart and counts each', async () => {
    const buffer = newBuffer();
    // 40 aggregates for one code: past the few a code's list is scanned for, they are found by key.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 40; i++) {
        buffer.record(click('c272', { country: i % 2 ? 'SE' : 'DE', referrerHost: `r${i}.example` }));
      }
    }
    assert.equal(buffer.pendingKeys, 40);
    await buffer.close();
    const rows = await countsOf(['c272']);
    assert.equal(rows.length, 40);
    assert.ok(rows.every((r) => r.clicks === 3));
    assert.equal(rows.find((r) => r.referrerHost === 'r7.example')?.country, 'SE');
  });

  test('a full buffer drops new keys and counts them; keys already held keep counting', async () => {
    const metrics = createMetrics();
    const buffer = createClickBuffer({ sql: db.sql, metrics, logger, flushIntervalMs: 60_000, maxKeys: 100 });
    for (let i = 0; i < 150; i++) buffer.record(click(`c${i}`, { kind: 'head', atMs: T0 + 2 * HOUR }));
    for (let i = 0; i < 10; i++) buffer.record(click('c0', { kind: 'head', atMs: T0 + 2 * HOUR }));
    assert.equal(buffer.pendingKeys, 100);
    assert.equal(await dropped(metrics), 50);
    await buffer.close();
    const [row] = await db.sql<{ n: number; keys: number }[]>`
      SELECT sum(clicks)::bigint AS n, count(*)::int AS keys FROM click_counts WHERE kind = 'head'`;
    assert.deepEqual(row, { n: 110, keys: 100 });
  });

  test('filling half the buffer starts a flush without waiting for the interval', async () => {
    const metrics = createMetrics();
    const buffer = createClickBuffer({
      sql: db.sql,
      metrics,
      logger,
      flushIntervalMs: 600_000,
      maxKeys: 100,
      batchRows: 20,
    });
    const codes = Array.from({ length: 50 }, (_, i) => `c${i}`);
    for (const code of codes) buffer.record(click(code, { kind: 'preview', atMs: T0 + 3 * HOUR }));
    await eventually(async () => ((await total(codes)) >= 50 ? true : undefined), { what: 'a size flush' });
    await buffer.close();
  });

  test('the interval flushes on its own', async () => {
    const buffer = createClickBuffer({
      sql: db.sql,
      metrics: createMetrics(),
      logger,
      flushIntervalMs: 100,
      maxKeys: 1000,
    });
    buffer.record(click('c250', { atMs: T0 + 4 * HOUR }));
    await eventually(async () => ((await total(['c250'])) === 1 ? true : undefined), {
      what: 'an interval flush',
    });
    await buffer.close();
  });

  /** Another transaction locks click_counts for `ms`: resolves once it holds the lock, `done` when it ends. */
  async function holdClickCounts(ms: number): Promise<{ done: Promise<unknown> }> {
    let locked = () => {};
    const holding = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const done = db.sql.begin(async (tx) => {
      await tx`LOCK TABLE click_counts IN EXCLUSIVE MODE`;
      locked();
      await tx`SELECT pg_sleep(${ms / 1000})`;
    });
    await holding;
    return { done }; // wrapped: an async function returning the promise itself would wait for it
  }

  test('a long flush stretches the wait before the next timed one, up to the maximum', async () => {
    const intervalOf = async (m: Metrics) => (await m.clickFlushIntervalSeconds.get()).values[0]?.value;
    const metrics = createMetrics();
    const buffer = newBuffer({ metrics, flushIntervalMs: 1000, maxFlushIntervalMs: 8000 });
    assert.equal(await intervalOf(metrics), 1, 'a fresh buffer waits the interval');
    buffer.record(click('c251', { atMs: T0 + 4 * HOUR }));
    await buffer.flush();
    assert.equal(await intervalOf(metrics), 1, 'a short flush leaves the interval as it is');

    // Another transaction holds click_counts for 400 ms: the flush waits about that long.
    let held = await holdClickCounts(400);
    buffer.record(click('c252', { atMs: T0 + 4 * HOUR }));
    await buffer.flush();
    await held.done;
    const stretched = (await intervalOf(metrics)) ?? 0;
    assert.ok(stretched >= 3 && stretched < 8, `about ten times a ~400 ms flush: ${stretched} s`);
    held = await holdClickCounts(1000);
    buffer.record(click('c252', { atMs: T0 + 4 * HOUR }));
    await buffer.flush();
    await held.done;
    assert.equal(await intervalOf(metrics), 8, 'capped at the maximum');
    assert.equal(await total(['c251', 'c252']), 3);

    const fixed = createMetrics();
    const plain = newBuffer({ metrics: fixed, flushIntervalMs: 1000 });
    held = await holdClickCounts(400);
    plain.record(click('c253', { atMs: T0 + 4 * HOUR }));
    await plain.flush();
    await held.done;
    assert.equal(await intervalOf(fixed), 1, 'no maximum: a fixed interval');
    await buffer.close();
    await plain.close();
  });

  test('a database outage keeps the aggregates (bounded), record() stays instant, and nothing is lost after', async () => {
    const metrics = createMetrics();
    const buffer = createClickBuffer({
      sql: viaProxy,
      metrics,
      logger,
      flushIntervalMs: 50,
      maxKeys: 100,
      batchRows: 50,
    });
    const codes = Array.from({ length: 100 }, (_, i) => `c${100 + i}`);
    let most = 0;
    const at = T0 + 5 * HOUR;
    buffer.record(click(codes[0]!, { atMs: at }));
    await buffer.flush(); // the pool is connected through the proxy
    assert.equal(await total(codes), 1);

    await proxy.cut();
    let recorded = 0;
    let spent = 0;
    const outageEnds = Date.now() + 1500;
    // Clicks keep arriving through the outage while the interval keeps failing to flush.
    while (Date.now() < outageEnds) {
      for (let i = 0; i < 80; i++) {
        const started = performance.now();
        buffer.record(click(codes[i]!, { atMs: at }));
        spent += performance.now() - started;
        recorded++;
        most = Math.max(most, buffer.pendingKeys);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const failures = (await metrics.clickFlushes.get()).values.find(
      (v) => v.labels.result === 'error',
    )?.value;
    assert.ok((failures ?? 0) >= 1, 'flushes failed during the outage');
    // Synchronous and O(1): microseconds on average (the OS may still deschedule any single call).
    assert.ok(
      spent / recorded < 0.05,
      `record() took ${((spent / recorded) * 1000).toFixed(1)} µs on average`,
    );
    assert.equal(await total(codes), 1, 'nothing reached the database while it was cut');
    // New keys while full are dropped and counted; memory stays within maxKeys + one retried batch.
    for (let i = 0; i < 100; i++) {
      buffer.record(click(codes[i]!, { kind: 'bot', atMs: at }));
      most = Math.max(most, buffer.pendingKeys);
    }
    const droppedClicks = await dropped(metrics);
    assert.ok(droppedClicks > 0, 'a full buffer dropped new keys');
    assert.ok(most <= 100 + 50, `held ${most} aggregates`);

    await proxy.restore();
    // Every click is either stored exactly once or counted as dropped.
    const expected = 1 + recorded + 100 - droppedClicks;
    await eventually(async () => ((await total(codes)) === expected ? true : undefined), {
      what: `all ${expected} clicks after the outage`,
      timeoutMs: 20_000,
    });
    await buffer.close();
    assert.equal(await total(codes), expected, 'no click counted twice');
  });

  test('onWritten sees every written click exactly once, a batch retried after an outage included', async () => {
    const seen: { code: string; clicks: number }[] = [];
    const buffer = createClickBuffer({
      sql: viaProxy,
      metrics: createMetrics(),
      logger,
      flushIntervalMs: 600_000,
      maxKeys: 1000,
      batchRows: 3,
      onWritten: (rows) => {
        for (const r of rows) seen.push({ code: r.code, clicks: r.clicks });
      },
    });
    const codes = Array.from({ length: 10 }, (_, i) => `written${i}`);
    const at = T0 + 7 * HOUR;
    for (const code of codes) for (let i = 0; i < 3; i++) buffer.record(click(code, { atMs: at }));
    await buffer.flush();
    assert.equal(await total(codes), 30);
    assert.equal(
      seen.reduce((n, r) => n + r.clicks, 0),
      30,
    );
    seen.length = 0;
    await proxy.cut();
    for (const code of codes) buffer.record(click(code, { atMs: at }));
    await buffer.flush();
    assert.equal(seen.length, 0, 'nothing is reported before it is written');
    await proxy.restore();
    await eventually(
      async () => {
        await buffer.flush();
        return (await total(codes)) === 40 ? true : undefined;
      },
      { what: 'the clicks after the outage', timeoutMs: 20_000 },
    );
    await buffer.close();
    assert.equal(await total(codes), 40);
    assert.deepEqual(seen.map((r) => r.code).sort(), [...codes].sort(), 'each aggregate reported once');
    assert.equal(
      seen.reduce((n, r) => n + r.clicks, 0),
      10,
    );
  });

  test('close() flushes what is buffered (shutdown)', async () => {
    const buffer = newBuffer();
    for (let i = 0; i < 7; i++) buffer.record(click('c260', { kind: 'qr', atMs: T0 + 6 * HOUR }));
    await buffer.close();
    assert.equal(await total(['c260']), 7);
  });
});
