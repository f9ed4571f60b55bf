// link_sync_queue (ADR 0024) on real Postgres: a row leaves only at the generation that was synced, so a change
// queued again while its batch runs is never removed with it; backoff hides a row until it is due.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../devkit/harness/database.ts';
import {
  deferSyncs,
  enqueueLinkSyncs,
  getQueuedSyncs,
  getSyncQueueHead,
  getSyncQueueStats,
  listDueSyncs,
  removeSyncedCodes,
} from '../../../lib/stores/link_sync_queue_store.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db.drop();
});

describe('link_sync_queue', () => {
  test('generations, backoff and stats', async () => {
    assert.deepEqual(await getSyncQueueStats(db.sql), {
      depth: 0,
      due: 0,
      retrying: 0,
      oldestEnqueuedAt: null,
      nextDueInMs: null,
    });
    assert.deepEqual(await getSyncQueueHead(db.sql), { nextDueInMs: null }, 'empty: nothing to wait for');
    await db.sql.begin((tx) => enqueueLinkSyncs(tx, ['aaa', 'bbb', 'ccc', 'aaa'], 'link.created by test'));
    assert.deepEqual(await getSyncQueueHead(db.sql), { nextDueInMs: 0 }, 'due now');
    assert.deepEqual(await listDueSyncs(db.sql, 10), ['aaa', 'bbb', 'ccc']);
    const taken = await getQueuedSyncs(db.sql, ['aaa', 'bbb', 'ccc', 'zzz']);
    assert.deepEqual([...taken.keys()].sort(), ['aaa', 'bbb', 'ccc']);
    assert.equal(taken.get('aaa')!.generation, 1);

    // While the batch runs, aaa changes again: its sync must happen once more, so its row must stay.
    await enqueueLinkSyncs(db.sql, ['aaa'], 'link.edited');
    const removed = await removeSyncedCodes(
      db.sql,
      [...taken.values()].filter((q) => q.code !== 'ccc'),
    );
    assert.equal(removed, 1, 'bbb left; aaa was queued again meanwhile');
    const left = await getQueuedSyncs(db.sql, ['aaa', 'bbb', 'ccc']);
    assert.deepEqual([...left.keys()].sort(), ['aaa', 'ccc']);
    assert.equal(left.get('aaa')!.generation, 2);
    assert.equal(left.get('aaa')!.reason, 'link.edited');

    // ccc failed: it backs off (not due), counted as retrying, and says why.
    await deferSyncs(db.sql, [{ code: 'ccc', generation: 1, delayMs: 60_000, error: 'Bitly 503' }]);
    assert.deepEqual(await listDueSyncs(db.sql, 10), ['aaa']);
    const stats = await getSyncQueueStats(db.sql);
    assert.equal(stats.depth, 2);
    assert.equal(stats.due, 1);
    assert.equal(stats.retrying, 1);
    assert.ok(stats.oldestEnqueuedAt instanceof Date);
    assert.equal(stats.nextDueInMs, 0, 'aaa is due now');
    const [ccc] = await db.sql<{ attempts: number; lastError: string }[]>`
      SELECT attempts, last_error AS "lastError" FROM link_sync_queue WHERE code = 'ccc'`;
    assert.deepEqual(ccc, { attempts: 1, lastError: 'Bitly 503' });

    // A deferral of an older generation changes nothing; queueing ccc again makes it due at once.
    await deferSyncs(db.sql, [{ code: 'aaa', generation: 1, delayMs: 60_000, error: 'stale' }]);
    assert.deepEqual(await listDueSyncs(db.sql, 10), ['aaa']);
    await removeSyncedCodes(db.sql, [{ code: 'aaa', generation: 2 }]);
    const waiting = await getSyncQueueStats(db.sql);
    assert.ok(
      waiting.nextDueInMs !== null && waiting.nextDueInMs > 50_000,
      `next due in ${waiting.nextDueInMs}`,
    );
    // The head (one row through the due index) agrees with the full stats: only ccc, backing off.
    const head = await getSyncQueueHead(db.sql);
    assert.ok(
      head.nextDueInMs !== null && Math.abs(head.nextDueInMs - waiting.nextDueInMs!) < 5_000,
      `head ${head.nextDueInMs} vs stats ${waiting.nextDueInMs}`,
    );
    await enqueueLinkSyncs(db.sql, ['ccc'], 'link.edited');
    assert.deepEqual(await listDueSyncs(db.sql, 10), ['ccc']);
    assert.equal((await getSyncQueueStats(db.sql)).retrying, 0, 'a new change starts its attempts afresh');
  });
});
