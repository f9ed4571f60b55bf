// The coalescing kicker (ADR 0098): kicks asked for together share one send, a send never begins within the
// window of the last, and every caller's promise settles with a send that began after it asked.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { coalesceKicks } from '../../../lib/temporal/coalesced_kicks.ts';

/** A sender that records when each send began and finishes after `ms`, or fails when told to. */
function recordingSender(ms: number) {
  const sends: { reason: string; startedAt: number; endedAt?: number }[] = [];
  let failNext = false;
  return {
    sends,
    failNext: () => {
      failNext = true;
    },
    send: async (reason: string) => {
      const entry: { reason: string; startedAt: number; endedAt?: number } = {
        reason,
        startedAt: Date.now(),
      };
      sends.push(entry);
      const fail = failNext;
      failNext = false;
      await new Promise((resolve) => setTimeout(resolve, ms));
      entry.endedAt = Date.now();
      if (fail) throw new Error('Temporal unavailable');
    },
  };
}

describe('coalesceKicks', () => {
  test('a lone kick is sent at once, under its own reason', async () => {
    const sender = recordingSender(5);
    const kicker = coalesceKicks(sender.send, 200);
    const asked = Date.now();
    await kicker.kickSyncQueue('post 1 updated');
    assert.equal(sender.sends.length, 1);
    assert.equal(sender.sends[0]!.reason, 'post 1 updated');
    assert.ok(sender.sends[0]!.startedAt - asked < 50);
  });

  test('a hundred kicks in a burst are two sends, the second after the window and after every ask', async () => {
    const sender = recordingSender(20);
    const kicker = coalesceKicks(sender.send, 200);
    const asks: Promise<unknown>[] = [];
    const askedAt: number[] = [];
    for (let i = 0; i < 100; i++) {
      askedAt.push(Date.now());
      asks.push(kicker.kickSyncQueue(`post ${i} updated`));
      if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(asks);
    assert.equal(sender.sends.length, 2);
    const [first, second] = sender.sends;
    assert.equal(first!.reason, 'post 0 updated');
    assert.equal(second!.reason, 'post 1 updated (and 98 more)');
    assert.ok(second!.startedAt - first!.startedAt >= 200, 'not within the window');
    assert.ok(second!.startedAt >= Math.max(...askedAt), 'began after the last ask');
  });

  test('each ask settles only once a send that began after it has finished', async () => {
    const sender = recordingSender(30);
    const kicker = coalesceKicks(sender.send, 0);
    await kicker.kickSyncQueue('a');
    // Asked while a send is in flight: waits for it, then a send of its own.
    const first = kicker.kickSyncQueue('b');
    await new Promise((resolve) => setTimeout(resolve, 10));
    const askedAt = Date.now();
    const second = kicker.kickSyncQueue('c');
    await Promise.all([first, second]);
    const settledAt = Date.now();
    const carrying = sender.sends.find((s) => s.startedAt >= askedAt);
    assert.ok(carrying, 'a send began after the last ask');
    assert.ok(carrying.endedAt! <= settledAt);
  });

  test('a failed send fails the asks that shared it, and the next ask sends again', async () => {
    const sender = recordingSender(5);
    const kicker = coalesceKicks(sender.send, 50);
    await kicker.kickSyncQueue('warm');
    sender.failNext();
    const shared = [kicker.kickSyncQueue('x'), kicker.kickSyncQueue('y')];
    const results = await Promise.allSettled(shared);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.match(String((results[0] as PromiseRejectedResult).reason), /Temporal unavailable/);
    await kicker.kickSyncQueue('z');
    assert.equal(sender.sends.at(-1)!.reason, 'z');
    assert.equal(sender.sends.length, 3);
  });

  test('kickSoon returns at once; a failed send is retried once for all that shared it, until one goes through', async () => {
    const sender = recordingSender(5);
    const errors: string[] = [];
    const kicker = coalesceKicks(sender.send, 50, (_error, reason) => errors.push(reason));
    sender.failNext();
    const asked = Date.now();
    for (const reason of ['p1', 'p2', 'p3']) kicker.kickSoon(reason);
    assert.ok(Date.now() - asked < 20, 'no wait');
    assert.equal(sender.sends.length, 1, 'the first ask is sent at once');
    await new Promise((resolve) => setTimeout(resolve, 1_400));
    // p1 failed alone; p2 and p3 shared the next send, which went through; p1's one retry then went through.
    assert.deepEqual(errors, ['p1']);
    assert.deepEqual(
      sender.sends.map((s) => s.reason),
      ['p1', 'p2 (and 1 more)', 'retry: p1'],
    );
  });
});
