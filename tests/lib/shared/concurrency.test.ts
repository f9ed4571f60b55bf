// The small concurrency helpers: a bounded pool over a list, and the queue the resolver's Postgres gate keeps its
// waiters in, which must hand them out in order and let go of each at once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Fifo, forEachConcurrently } from '../../../lib/shared/concurrency.ts';
import { exposeGc } from '../../helpers/gc.ts';

describe('Fifo', () => {
  test('hands items out in arrival order, across trims, and reports its size', () => {
    const q = new Fifo<number>();
    let next = 0;
    let taken = 0;
    // Arrivals outpace departures for a while, then it drains: each trim (half taken, ≥ 1024) keeps the order.
    for (let round = 0; round < 5000; round++) {
      q.push(next++);
      q.push(next++);
      assert.equal(q.shift(), taken++);
    }
    assert.equal(q.size, next - taken);
    while (q.size > 0) assert.equal(q.shift(), taken++);
    assert.equal(taken, next);
    assert.equal(q.shift(), undefined);
    q.push(7);
    assert.equal(q.shift(), 7);
  });

  test('lets go of a taken item while others keep arriving (nothing of a busy stretch stays reachable)', async () => {
    const gc = exposeGc();
    const q = new Fifo<object>();
    q.push({ first: true });
    let item: object | undefined = { taken: true };
    q.push(item);
    const held = new WeakRef(item);
    item = undefined;
    // One more behind it, so the queue never runs empty: busy, as a saturated gate is.
    q.push({ later: true });
    q.shift();
    q.shift();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    assert.equal(held.deref(), undefined, 'the taken item was collected while the queue was still in use');
    assert.equal(q.size, 1);
  });
});

describe('forEachConcurrently', () => {
  test('runs every item with at most `limit` in flight and rethrows the first error', async () => {
    let inFlight = 0;
    let most = 0;
    const seen: number[] = [];
    await forEachConcurrently([1, 2, 3, 4, 5, 6], 2, async (n) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.push(n);
      inFlight--;
    });
    assert.equal(most, 2);
    assert.deepEqual(seen.sort(), [1, 2, 3, 4, 5, 6]);
    await assert.rejects(
      forEachConcurrently([1, 2, 3], 2, async (n) => {
        if (n === 2) throw new Error('two');
      }),
      /two/,
    );
  });
});
