// The default CLICK_BUFFER_MAX_KEYS holds a heavy run without dropping a click (10 minutes at
// ~70k req/s over 100,000 codes must count every human click). What fills the buffer is distinct keys, not
// traffic: per flush interval at most one running count per clicked code (its cell) plus what spilled into the
// map, and across an hour boundary each code's old-hour count spills while its cell starts the new hour. So the
// feed here is harsher than any real rate: 100,000 codes clicked at random many times faster than 70k/s, the
// flushes writing to the real Postgres meanwhile (each of up to ~100,000 aggregates takes many round trips), the
// hour changing halfway. Every click must be written exactly once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import { NO_AGENT } from '../../../lib/clicks/classify_click.ts';
import { createClickBuffer } from '../../../lib/clicks/click_buffer.ts';
import { parseConfig } from '../../../lib/shared/config.ts';
import { createLogger } from '../../../lib/shared/logger.ts';
import { createMetrics } from '../../../lib/shared/metrics.ts';

const CODES = 100_000;
/** Clicks per event-loop turn (the flush's statements progress between turns, as between redirects). */
const SLICE = 15_000;
const SLICES = 40;
const HOUR_EDGE = Date.UTC(2026, 0, 15, 11, 0, 0);

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});

test('default CLICK_BUFFER_MAX_KEYS: 100,000 codes, flushes running meanwhile, an hour boundary: nothing dropped', async () => {
  const { maxKeys } = parseConfig({}).clicks;
  const metrics = createMetrics();
  const buffer = createClickBuffer({
    sql: db.sql,
    metrics,
    logger: createLogger({ level: 'silent' }),
    flushIntervalMs: 250,
    maxKeys,
  });
  // The hot path keeps one cell per cached link; a tenth of the clicks take the map path (record) as misses do.
  const cells = Array.from({ length: CODES }, (_, i) => buffer.cell(`k${i}`));
  const nextCode = () => Math.floor(Math.random() * CODES);
  let sent = 0;
  for (let slice = 0; slice < SLICES; slice++) {
    // The first half in the hour before the edge, the second in the hour after.
    const atMs = slice < SLICES / 2 ? HOUR_EDGE - 60_000 + slice : HOUR_EDGE + slice;
    for (let i = 0; i < SLICE; i++) {
      const n = nextCode();
      if (n % 10 === 0)
        buffer.record({ code: `k${n}`, kind: 'human', country: '', referrerHost: '', atMs, agent: NO_AGENT });
      else buffer.recordInCell(cells[n]!, 'human', '', '', atMs, NO_AGENT);
      sent++;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  await buffer.close();

  const droppedClicks = (await metrics.clicksDropped.get()).values[0]?.value ?? 0;
  assert.equal(droppedClicks, 0, `maxKeys ${maxKeys}: clicks dropped`);
  const [row] = await db.sql<{ clicks: string; keys: string; codes: string }[]>`
    SELECT sum(clicks)::text AS clicks, count(*)::text AS keys, count(DISTINCT code)::text AS codes
    FROM click_counts`;
  assert.equal(Number(row!.clicks), sent, 'every click written exactly once');
  // Both hours' keys for (nearly) every code: the run did fill the buffer the way the comment above says.
  assert.ok(Number(row!.keys) > 1.8 * CODES, `keys written: ${row!.keys}`);
});
