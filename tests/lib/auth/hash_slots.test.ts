// The password hash slots on their own, with work the test finishes by hand (no scrypt, no clock): the sign-in
// queue bound, one waiting sign-in per network, trusted callers never refused, aborted and overdue waiters
// leaving without running, FIFO order.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createHashSlots, HashBusyError } from '../../../lib/auth/hash_slots.ts';

/** Work that runs until the test says it is done, recording that it started. */
function manualWork(started: string[], name: string) {
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    fn: async () => {
      started.push(name);
      await done;
      return name;
    },
    finish: () => finish(),
  };
}

/** Lets every settled promise's reactions run. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A run's outcome, handled at once (a refusal is a rejection nobody may leave unhandled). */
type Outcome = Promise<{ value: string } | { error: unknown }>;
function settle(promise: Promise<string>): Outcome {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

async function value(outcome: Outcome): Promise<string> {
  const settled = await outcome;
  if ('error' in settled) throw settled.error;
  return settled.value;
}

async function refusal(outcome: Outcome): Promise<HashBusyError> {
  const settled = await outcome;
  assert.ok('error' in settled, 'expected a refusal');
  assert.ok(settled.error instanceof HashBusyError, String(settled.error));
  return settled.error;
}

const values = (outcomes: Outcome[]) => Promise.all(outcomes.map(value));

describe('password hash slots', () => {
  test('sign-ins beyond the bound are refused with a Retry-After; trusted callers still queue', async () => {
    const slots = createHashSlots({ slots: 2, maxWaitMs: 60_000 });
    const started: string[] = [];
    const works = Array.from({ length: 5 }, (_, i) => manualWork(started, `w${i}`));
    const runs = works.map((w, i) => settle(slots.run(w.fn, { network: `n${i}`, maxWaiting: 2 })));
    await flush();
    assert.deepEqual(started, ['w0', 'w1'], 'two run at once');
    const refused = await refusal(runs[4]!);
    assert.equal(refused.reason, 'full');
    assert.equal(refused.status, 503);
    assert.match(refused.extra.headers?.['Retry-After'] ?? '', /^[1-9]\d*$/);
    // A trusted caller (no admission) is never refused: it waits behind the sign-ins.
    const trusted = manualWork(started, 'trusted');
    const trustedRun = settle(slots.run(trusted.fn));
    assert.deepEqual(slots.stats().waiting, 3);
    for (const w of works) w.finish();
    trusted.finish();
    assert.deepEqual(await values(runs.slice(0, 4)), ['w0', 'w1', 'w2', 'w3']);
    assert.equal(await value(trustedRun), 'trusted');
    assert.deepEqual(started, ['w0', 'w1', 'w2', 'w3', 'trusted'], 'first come, first served');
    assert.deepEqual(slots.stats(), {
      running: 0,
      waiting: 0,
      outcomes: { hashed: 4, full: 1, network: 0, timed_out: 0, abandoned: 0 },
    });
  });

  test('a network with a sign-in waiting is refused another; other networks are not', async () => {
    const slots = createHashSlots({ slots: 1, maxWaitMs: 60_000 });
    const started: string[] = [];
    const a = [manualWork(started, 'a0'), manualWork(started, 'a1'), manualWork(started, 'a2')];
    const b = manualWork(started, 'b0');
    const runs = a.map((w) => settle(slots.run(w.fn, { network: '198.51.100.0', maxWaiting: 8 })));
    const bRun = settle(slots.run(b.fn, { network: '2001:db8::/64', maxWaiting: 8 }));
    await flush();
    assert.equal((await refusal(runs[2]!)).reason, 'network');
    for (const w of [...a, b]) w.finish();
    assert.deepEqual(await values([runs[0]!, runs[1]!, bRun]), ['a0', 'a1', 'b0']);
    // Once its waiting sign-in ran, the network may queue again.
    const again = manualWork(started, 'a3');
    const blocker = manualWork(started, 'x');
    const blockerRun = settle(slots.run(blocker.fn));
    const againRun = settle(slots.run(again.fn, { network: '198.51.100.0', maxWaiting: 8 }));
    blocker.finish();
    again.finish();
    assert.deepEqual(await values([blockerRun, againRun]), ['x', 'a3']);
  });

  test('a sign-in whose client went away leaves the queue without running; so does an overdue one', async () => {
    const slots = createHashSlots({ slots: 1, maxWaitMs: 60_000 });
    const started: string[] = [];
    const first = manualWork(started, 'first');
    const gone = manualWork(started, 'gone');
    const next = manualWork(started, 'next');
    const client = new AbortController();
    const firstRun = settle(slots.run(first.fn, { network: 'n1', maxWaiting: 1 }));
    const goneRun = settle(slots.run(gone.fn, { network: 'n2', maxWaiting: 1, signal: client.signal }));
    assert.equal(slots.stats().waiting, 1);
    client.abort();
    assert.equal((await refusal(goneRun)).reason, 'abandoned');
    assert.equal(slots.stats().waiting, 0, 'its place is free at once');
    const nextRun = settle(slots.run(next.fn, { network: 'n2', maxWaiting: 1 }));
    first.finish();
    next.finish();
    assert.deepEqual(await values([firstRun, nextRun]), ['first', 'next']);
    assert.deepEqual(started, ['first', 'next'], 'the abandoned attempt never ran');
    // Already aborted on arrival: refused without a place.
    assert.equal(
      (
        await refusal(
          settle(slots.run(gone.fn, { network: 'n3', maxWaiting: 1, signal: AbortSignal.abort() })),
        )
      ).reason,
      'abandoned',
    );

    const overdue = createHashSlots({ slots: 1, maxWaitMs: 1 });
    const hold = manualWork(started, 'hold');
    const holdRun = settle(overdue.run(hold.fn, { network: 'n1', maxWaiting: 1 }));
    assert.equal(
      (await refusal(settle(overdue.run(next.fn, { network: 'n2', maxWaiting: 1 })))).reason,
      'timed_out',
    );
    hold.finish();
    await value(holdRun);
    assert.deepEqual(overdue.stats().outcomes, {
      hashed: 1,
      full: 0,
      network: 0,
      timed_out: 1,
      abandoned: 0,
    });
  });
});
