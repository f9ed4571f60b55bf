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
  test('changes go first, then links someone made, then archive links; each class oldest first', async () => {
    await db.sql`DELETE FROM link_sync_queue`;
    await enqueueLinkSyncs(db.sql, ['arch-1', 'arch-2'], 'link.created by backfill run-1', 'archive');
    await enqueueLinkSyncs(db.sql, ['made-1'], 'link.created by api', 'created');
    await enqueueLinkSyncs(db.sql, ['chg-1', 'chg-2'], 'link.retargeted');
    // The archive links were queued first, the changes last; within the changes, chg-2 before chg-1.
    await db.sql`
      UPDATE link_sync_queue AS q SET next_attempt_at = now() - make_interval(secs => t.age)
      FROM (VALUES ('arch-1', 40), ('arch-2', 39), ('made-1', 30), ('chg-2', 20), ('chg-1', 10)) AS t(code, age)
      WHERE q.code = t.code`;
    assert.deepEqual(await listDueSyncs(db.sql, 10), ['chg-2', 'chg-1', 'made-1', 'arch-1', 'arch-2']);
    assert.deepEqual(await listDueSyncs(db.sql, 2), ['chg-2', 'chg-1'], 'a short take is the most urgent');

    // An archive link changed before its sync is a change; a change queued again as a creation stays a change.
    await enqueueLinkSyncs(db.sql, ['arch-2'], 'link.retargeted');
    await enqueueLinkSyncs(db.sql, ['chg-1'], 'link.created by api', 'created');
    const rows = await db.sql<{ code: string; priority: number }[]>`
      SELECT code, priority FROM link_sync_queue ORDER BY code`;
    assert.deepEqual(Object.fromEntries(rows.map((r) => [r.code, r.priority])), {
      'arch-1': 2,
      'arch-2': 0,
      'chg-1': 0,
      'chg-2': 0,
      'made-1': 1,
    });

    // A change backing off is passed over (not waited for); the head is the earliest of every class.
    const all = await getQueuedSyncs(db.sql, ['chg-1', 'chg-2', 'arch-2']);
    await deferSyncs(
      db.sql,
      [...all.values()].map((q) => ({ ...q, delayMs: 120_000, error: 'Bitly 503' })),
    );
    assert.deepEqual(await listDueSyncs(db.sql, 10), ['made-1', 'arch-1']);
    assert.deepEqual(await getSyncQueueHead(db.sql), { nextDueInMs: 0 });
    await removeSyncedCodes(db.sql, [
      { code: 'made-1', generation: 1 },
      { code: 'arch-1', generation: 1 },
    ]);
    const head = await getSyncQueueHead(db.sql);
    assert.ok(head.nextDueInMs !== null && head.nextDueInMs > 100_000, `next due in ${head.nextDueInMs}`);

    // Each class is a range read of the due index, not a walk of the queue.
    const plan = await db.sql.begin(async (tx) => {
      await tx`SET LOCAL enable_seqscan = off`;
      return (await tx.unsafe(
        `EXPLAIN SELECT q.code FROM link_sync_queue AS q
         WHERE q.priority = 1 AND q.next_attempt_at <= now() ORDER BY q.next_attempt_at, q.code LIMIT 200`,
      )) as { 'QUERY PLAN': string }[];
    });
    assert.match(plan.map((r) => r['QUERY PLAN']).join('\n'), /link_sync_queue_due_by_priority_idx/);
  });
});
