// scrapeRead: a gauge read at scrape time never holds a scrape past its wait, never queues a second read behind a
// running one, and serves the latest completed read (null after a failure, so gauges keep their last values).
// Postgres is stood in for by promises the test settles; the clock is node:test's mock timers.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { scrapeRead } from '../../../lib/shared/scrape_read.ts';

/** A read whose every call waits until the test answers it. */
function controlledRead<T>() {
  const calls: { resolve: (value: T) => void; reject: (error: Error) => void }[] = [];
  const read = () =>
    new Promise<T>((resolve, reject) => {
      calls.push({ resolve, reject });
    });
  return { read, calls };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('scrapeRead', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  test('a read that answers within the wait is the answer', async () => {
    const { read, calls } = controlledRead<number>();
    const current = scrapeRead(read, { waitMs: 500 });
    const answer = current();
    calls[0]!.resolve(7);
    assert.equal(await answer, 7);
  });

  test('a hung read: the scrape answers after the wait with the last value, and no second read starts', async () => {
    const { read, calls } = controlledRead<number>();
    const current = scrapeRead(read, { reuseMs: 1_000, waitMs: 500 });
    const first = current();
    calls[0]!.resolve(7);
    assert.equal(await first, 7);

    mock.timers.tick(2_000);
    const hung = current();
    assert.equal(calls.length, 2, 'a new read once the reuse window has passed');
    mock.timers.tick(500);
    assert.equal(await hung, 7, 'the last value, after the wait');

    // Scrapes while the read hangs: each waits, none starts another read.
    for (let i = 0; i < 5; i++) {
      mock.timers.tick(2_000);
      const again = current();
      mock.timers.tick(500);
      assert.equal(await again, 7);
    }
    assert.equal(calls.length, 2, 'still the one read');

    // The hung read answers at last: the next scrape has its value, and may start a new read.
    calls[1]!.resolve(9);
    await flush();
    mock.timers.tick(2_000);
    const after = current();
    assert.equal(calls.length, 3);
    mock.timers.tick(500);
    assert.equal(await after, 9);
  });

  test('within the reuse window no new read starts; a failed read answers null', async () => {
    const { read, calls } = controlledRead<number>();
    const current = scrapeRead(read, { reuseMs: 5_000, waitMs: 500 });
    const first = current();
    calls[0]!.resolve(3);
    assert.equal(await first, 3);
    mock.timers.tick(4_000);
    assert.equal(await current(), 3);
    assert.equal(calls.length, 1, 'inside the window: the same answer, no read');

    mock.timers.tick(2_000);
    const failing = current();
    calls[1]!.reject(new Error('Postgres is away'));
    assert.equal(await failing, null, 'a failed read: null, so each gauge keeps its last value');
  });
});
