// A worker's start registers the Schedules (lib/temporal/schedules.ts). A Temporal that has just started, or is
// loaded, can answer a schedule's describe with a service error; the worker used to exit at start for it (seen in
// npm start's test under the whole suite's load). Against the real dev server, with the schedule's describe made
// to fail as Temporal failed it: a retryable error is tried again and the schedule ends registered; an error a
// retry cannot change is thrown at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client, ServiceError } from '@temporalio/client';
import { connectTestTemporal, type TestTemporal, uniqueId } from '../../../devkit/harness/temporal.ts';
import { createLogger } from '../../../lib/shared/logger.ts';
import { ensureScheduleRetrying, type ScheduleSpec } from '../../../lib/temporal/schedules.ts';
import { WORKFLOW_TYPES } from '../../../workflows/contract.ts';

let temporal: TestTemporal;
before(async () => {
  temporal = await connectTestTemporal();
});
after(async () => {
  await temporal.close();
});

/** The SDK's error for a describe Temporal failed, with the gRPC status it carries. */
const describeFailed = (code: number) =>
  new ServiceError('Failed to describe schedule', {
    cause: Object.assign(new Error(`${code} describe failed`), {
      code,
      details: 'describe failed',
      metadata: {},
    }),
  });

/** The real client, with `failures` describes of any schedule answered by the given errors first. */
function withFailingDescribes(client: Client, failures: Error[]): Client {
  const schedule = new Proxy(client.schedule, {
    get(target, prop, receiver) {
      if (prop !== 'getHandle') return Reflect.get(target, prop, receiver);
      return (id: string) => {
        const handle = target.getHandle(id);
        return new Proxy(handle, {
          get(h, p, r) {
            if (p !== 'describe') return Reflect.get(h, p, r);
            return async () => {
              const failure = failures.shift();
              if (failure) throw failure;
              return h.describe();
            };
          },
        });
      };
    },
  });
  return new Proxy(client, {
    get: (target, prop, receiver) => (prop === 'schedule' ? schedule : Reflect.get(target, prop, receiver)),
  });
}

/** A daily schedule on a task queue of its own. */
function dailySchedule(): { taskQueue: string; spec: ScheduleSpec } {
  const taskQueue = uniqueId('sched-retry');
  return {
    taskQueue,
    spec: {
      scheduleId: `${taskQueue}-daily`,
      every: '1d',
      workflowType: WORKFLOW_TYPES.dailyClicksWebhook,
      kind: 'test',
      args: [],
    },
  };
}

function logged() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'info',
    name: 'test',
    destination: { write: (line: string) => lines.push(JSON.parse(line)) },
  });
  return { logger, lines };
}

describe('registering a Schedule while Temporal answers with errors', () => {
  test('a service error a retry can change is tried again; the schedule ends as configured', async () => {
    const { taskQueue, spec } = dailySchedule();
    const { logger, lines } = logged();
    await ensureScheduleRetrying(temporal.client, taskQueue, spec, logger, {
      retries: 2,
      baseMs: 10,
      maxMs: 10,
    });
    // A later start: create answers "already running", and the describe fails twice before it answers.
    const failures = [describeFailed(2), describeFailed(14)];
    const changed = { ...spec, every: '12h' };
    await ensureScheduleRetrying(
      withFailingDescribes(temporal.client, failures),
      taskQueue,
      changed,
      logger,
      { retries: 3, baseMs: 10, maxMs: 10 },
    );
    assert.equal(failures.length, 0, 'both failures were met');
    const retries = lines.filter((l) => l.msg === 'Temporal did not answer for a schedule; trying again');
    assert.deepEqual(
      retries.map((l) => l.attempt),
      [1, 2],
    );
    const described = await temporal.client.schedule.getHandle(spec.scheduleId).describe();
    assert.equal(Number(described.spec.intervals?.[0]?.every), 12 * 3_600_000, 'updated after the retries');
    await temporal.client.schedule.getHandle(spec.scheduleId).delete();
  });

  test('an error a retry cannot change, or one past the last attempt, is thrown', async () => {
    const { taskQueue, spec } = dailySchedule();
    const { logger, lines } = logged();
    await ensureScheduleRetrying(temporal.client, taskQueue, spec, logger, {
      retries: 1,
      baseMs: 10,
      maxMs: 10,
    });
    const denied = [describeFailed(7)];
    await assert.rejects(
      ensureScheduleRetrying(withFailingDescribes(temporal.client, denied), taskQueue, spec, logger, {
        retries: 1,
        baseMs: 10,
        maxMs: 10,
      }),
      /Failed to describe schedule/,
    );
    const unavailable = [describeFailed(14), describeFailed(14)];
    await assert.rejects(
      ensureScheduleRetrying(withFailingDescribes(temporal.client, unavailable), taskQueue, spec, logger, {
        retries: 1,
        baseMs: 10,
        maxMs: 10,
      }),
      /Failed to describe schedule/,
    );
    assert.equal(
      lines.filter((l) => l.msg === 'Temporal did not answer for a schedule; trying again').length,
      1,
    );
    await temporal.client.schedule.getHandle(spec.scheduleId).delete();
  });
});
