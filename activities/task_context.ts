import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { PermanentFailure, TransientFailure } from '../lib/shared/errors.ts';
import { keepingAlive, type TaskContext } from '../lib/shared/task_context.ts';
import { coalesceKicks, KICK_WINDOW_MS, sharedCoalescedKicker } from '../lib/temporal/coalesced_kicks.ts';
import {
  createExpirySweeper,
  createLinkSyncRequester,
  createSyncQueueKicker,
  signalSyncQueue,
} from '../lib/temporal/link_signals.ts';
import { getMainTaskQueue } from '../workflows/contract.ts';

/** The running activity as lib/ sees long work: heartbeats, resume details, attempt, cancellation, sleep. */
export function currentTaskContext(): TaskContext {
  const ctx = Context.current();
  return {
    heartbeat: (details) => ctx.heartbeat(details),
    resumed: ctx.info.heartbeatDetails,
    attempt: ctx.info.attempt,
    signal: ctx.cancellationSignal,
    sleep: (ms) => ctx.sleep(ms),
  };
}

/**
 * Runs `work` while the activity heartbeats every `everyMs` on its own, repeating `work`'s last details
 * (lib/shared/task_context.ts `keepingAlive`): a step lost with its worker is retried within the workflow's short
 * heartbeat timeout, a live step is never timed out for waiting on one slow request, and with `stallMs` a step
 * that reports nothing for that long is still timed out.
 */
export function withKeepAlive<T>(
  everyMs: number,
  work: (context: TaskContext) => Promise<T>,
  options: { stallMs?: number } = {},
): Promise<T> {
  return keepingAlive(currentTaskContext(), everyMs, work, options);
}

/** The workflow that runs this activity (audit reasons), or `direct` outside one. */
export function currentWorkflowId(): string {
  return Context.current().info.workflowExecution?.workflowId ?? 'direct';
}

/**
 * The deployment's task queue, as the activity's signals need it: the main one, also for an activity of the
 * drainers' queue (ADR 0099).
 */
export function currentTaskQueue(): string {
  return getMainTaskQueue(Context.current().info.taskQueue);
}

/** Signals sent from an activity go through the worker's client, to the deployment's workflows. */
export function currentSignals() {
  const { client } = Context.current();
  const taskQueue = currentTaskQueue();
  return {
    sync: createLinkSyncRequester(client.workflow, taskQueue),
    sweeper: createExpirySweeper(client.workflow, taskQueue),
    queue: createSyncQueueKicker(client.workflow, taskQueue),
    /** The same kick, shared with this process's other kicks of the moment (single post events: ADR 0098). */
    coalescedQueue: sharedCoalescedKicker(client.workflow, taskQueue, () =>
      coalesceKicks(
        (reason) => signalSyncQueue(client.workflow, taskQueue, reason),
        KICK_WINDOW_MS,
        (err, reason) =>
          log.warn('the sync queue drainer could not be woken; retrying (the codes wait in Postgres)', {
            error: err instanceof Error ? err.message : String(err),
            reason,
          }),
      ),
    ),
  };
}

/**
 * Runs one lib/ function as an activity: its typed failures become Temporal's (PermanentFailure: not retried,
 * under its kind; TransientFailure: retried, after its delay). Anything else stays retryable as thrown.
 */
export async function runStep<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof PermanentFailure) throw ApplicationFailure.nonRetryable(error.message, error.kind);
    if (error instanceof TransientFailure) {
      throw ApplicationFailure.create({
        type: error.kind,
        message: error.message,
        ...(error.retryAfterMs !== undefined ? { nextRetryDelay: error.retryAfterMs } : {}),
      });
    }
    throw error;
  }
}
