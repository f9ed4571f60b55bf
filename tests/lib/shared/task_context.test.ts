// keepingAlive: the beats a long step sends on its own between its progress reports. They repeat the step's last
// details (a retry resumes from them, so a bare beat must never replace a cursor), start from the resumed details,
// stop when the step ends, and stop once the step has reported nothing for `stallMs`, so a hung step still times
// out. The clock and the interval are node:test's mock timers.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { keepingAlive, type TaskContext } from '../../../lib/shared/task_context.ts';

function recordingContext(resumed?: unknown): TaskContext & { beats: unknown[] } {
  const beats: unknown[] = [];
  return {
    beats,
    heartbeat: (details) => beats.push(details),
    resumed,
    attempt: resumed === undefined ? 1 : 2,
    signal: new AbortController().signal,
    sleep: async () => {},
  };
}

/** A step that runs until `finish()` is called, reporting whatever the test tells it to. */
function controlledStep() {
  let finish!: (value: string) => void;
  let report!: (details: unknown) => void;
  const done = new Promise<string>((resolve) => {
    finish = resolve;
  });
  const work = async (context: TaskContext) => {
    report = (details) => context.heartbeat(details);
    return done;
  };
  return { work, finish: (v: string) => finish(v), report: (d: unknown) => report(d) };
}

describe('keepingAlive', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  test('beats at once and every interval, repeating the last details the step reported', async () => {
    const context = recordingContext();
    const step = controlledStep();
    const running = keepingAlive(context, 5_000, step.work);
    assert.deepEqual(context.beats, [undefined], 'a beat at the start');
    mock.timers.tick(5_000);
    assert.deepEqual(context.beats, [undefined, undefined]);
    step.report({ cursor: 'abc' });
    mock.timers.tick(5_000);
    mock.timers.tick(5_000);
    assert.deepEqual(context.beats, [
      undefined,
      undefined,
      { cursor: 'abc' },
      { cursor: 'abc' },
      { cursor: 'abc' },
    ]);
    step.finish('result');
    assert.equal(await running, 'result');
    mock.timers.tick(60_000);
    assert.equal(context.beats.length, 5, 'no beat after the step ended');
  });

  test("a retry's beats carry the resumed details until the step reports its own", async () => {
    const context = recordingContext({ cursor: 'resumed-here' });
    const step = controlledStep();
    const running = keepingAlive(context, 5_000, step.work);
    mock.timers.tick(5_000);
    assert.deepEqual(context.beats, [{ cursor: 'resumed-here' }, { cursor: 'resumed-here' }]);
    step.report({ cursor: 'further' });
    mock.timers.tick(5_000);
    assert.deepEqual(context.beats.at(-1), { cursor: 'further' });
    step.finish('ok');
    await running;
  });

  test('with stallMs, the beats stop once the step has reported nothing for that long, and resume with progress', async () => {
    const context = recordingContext();
    const step = controlledStep();
    const running = keepingAlive(context, 5_000, step.work, { stallMs: 60_000 });
    mock.timers.tick(60_000);
    const atStall = context.beats.length;
    assert.equal(atStall, 13, 'the start, and one every 5 s for a minute');
    mock.timers.tick(5_000);
    mock.timers.tick(30_000);
    assert.equal(context.beats.length, atStall, 'no beat past a minute without progress');
    step.report({ n: 1 });
    mock.timers.tick(5_000);
    assert.deepEqual(context.beats.slice(atStall), [{ n: 1 }, { n: 1 }], 'progress, and beats again');
    step.finish('ok');
    await running;
  });

  test('the beats stop when the step throws', async () => {
    const context = recordingContext();
    const running = keepingAlive(context, 1_000, async () => {
      throw new Error('step failed');
    });
    await assert.rejects(running, /step failed/);
    mock.timers.tick(10_000);
    assert.equal(context.beats.length, 1);
  });
});
