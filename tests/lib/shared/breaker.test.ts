// The redirect path's breaker: it opens after a run of failures, and then no caller waits on the dependency; a
// probe of its own, spaced further apart after each failure, decides when it closes. The clock is node:test's
// mock timers; the probe is a promise the test settles.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { createBreaker } from '../../../lib/shared/breaker.ts';

/** A breaker whose probes the test answers one by one, and a record of what it said. */
function controlled(failures = 3) {
  const probes: { ok: () => void; fail: () => void }[] = [];
  const events: string[] = [];
  const breaker = createBreaker({
    failures,
    openMs: 1_000,
    maxOpenMs: 4_000,
    probe: () =>
      new Promise<void>((resolve, reject) => {
        probes.push({ ok: () => resolve(), fail: () => reject(new Error('still down')) });
      }),
    onOpen: () => events.push('open'),
    onClose: () => events.push('close'),
  });
  return { breaker, probes, events };
}

/** Lets the probe's reactions run (they are promise reactions, not timers). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createBreaker', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  test('opens after the given failures in a row; a success in between starts the count again', () => {
    const { breaker, events } = controlled(3);
    breaker.failed(new Error('a'));
    breaker.failed(new Error('b'));
    breaker.succeeded();
    breaker.failed(new Error('c'));
    breaker.failed(new Error('d'));
    assert.equal(breaker.open, false);
    breaker.failed(new Error('e'));
    assert.equal(breaker.open, true);
    assert.deepEqual(events, ['open']);
    breaker.stop();
  });

  test('while open, probes after openMs, then twice as long after each failed probe, up to maxOpenMs', async () => {
    const { breaker, probes, events } = controlled(1);
    breaker.failed(new Error('down'));
    mock.timers.tick(999);
    assert.equal(probes.length, 0);
    mock.timers.tick(1);
    assert.equal(probes.length, 1, 'first probe after 1 s');
    // A probe still running: no second one, however long it takes.
    mock.timers.tick(10_000);
    assert.equal(probes.length, 1);
    probes[0]?.fail();
    await settle();
    mock.timers.tick(1_999);
    assert.equal(probes.length, 1);
    mock.timers.tick(1);
    assert.equal(probes.length, 2, 'then after 2 s');
    probes[1]?.fail();
    await settle();
    mock.timers.tick(4_000);
    assert.equal(probes.length, 3, 'then after 4 s');
    probes[2]?.fail();
    await settle();
    mock.timers.tick(3_999);
    assert.equal(probes.length, 3);
    mock.timers.tick(1);
    assert.equal(probes.length, 4, 'and never more than maxOpenMs apart');
    assert.equal(breaker.open, true, 'every probe failed');
    probes[3]?.ok();
    await settle();
    assert.equal(breaker.open, false, 'an answered probe closes it');
    assert.deepEqual(events, ['open', 'close']);
    mock.timers.tick(60_000);
    assert.equal(probes.length, 4, 'no probe while closed');
  });

  test('reopening starts from openMs again', async () => {
    const { breaker, probes } = controlled(1);
    breaker.failed(new Error('down'));
    mock.timers.tick(1_000);
    probes[0]?.fail();
    await settle();
    mock.timers.tick(2_000);
    probes[1]?.ok();
    await settle();
    assert.equal(breaker.open, false);
    breaker.failed(new Error('down again'));
    mock.timers.tick(1_000);
    assert.equal(probes.length, 3);
    breaker.stop();
  });

  test("a call's answer while open closes it and cancels the probe; a call's failure while open changes nothing", async () => {
    const { breaker, probes, events } = controlled(2);
    breaker.failed(new Error('a'));
    breaker.failed(new Error('b'));
    assert.equal(breaker.open, true);
    breaker.failed(new Error('late failure of a call made before it opened'));
    assert.deepEqual(events, ['open']);
    breaker.succeeded();
    assert.equal(breaker.open, false);
    assert.deepEqual(events, ['open', 'close']);
    mock.timers.tick(10_000);
    assert.equal(probes.length, 0);
    // And the failure count starts again from nothing.
    breaker.failed(new Error('c'));
    assert.equal(breaker.open, false);
  });

  test('a probe that throws counts as a failed probe', async () => {
    let calls = 0;
    const breaker = createBreaker({
      failures: 1,
      openMs: 100,
      maxOpenMs: 100,
      probe: () => {
        calls++;
        throw new Error('no connection at all');
      },
    });
    breaker.failed(new Error('down'));
    mock.timers.tick(100);
    await settle();
    mock.timers.tick(100);
    await settle();
    assert.equal(calls, 2);
    assert.equal(breaker.open, true);
    breaker.stop();
  });

  test('stopped: no probe runs', () => {
    const { breaker, probes } = controlled(1);
    breaker.failed(new Error('down'));
    breaker.stop();
    mock.timers.tick(60_000);
    assert.equal(probes.length, 0);
  });
});
