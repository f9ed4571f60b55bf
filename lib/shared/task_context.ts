/**
 * What a long-running piece of work needs from whoever runs it: progress reports that let a retry resume
 * (heartbeats), cancellation, the attempt number and a way to wait. Temporal activities provide it from their
 * context (activities/task_context.ts); tests and scripts can pass `runOnce()`. Keeps lib/ free of Temporal.
 */
export interface TaskContext {
  /** Records progress; a retry of the same work receives the last details as `resumed`. */
  heartbeat(details?: unknown): void;
  /** The details of the last heartbeat of an earlier attempt, if any. */
  readonly resumed: unknown;
  /** 1 on the first attempt. */
  readonly attempt: number;
  /** Aborted when the work is cancelled. */
  readonly signal: AbortSignal;
  /** Waits, cancellably. */
  sleep(ms: number): Promise<void>;
}

/** A context for running work once, outside Temporal (tests, scripts): no resume, never cancelled. */
export function runOnce(): TaskContext {
  return {
    heartbeat() {},
    resumed: undefined,
    attempt: 1,
    signal: new AbortController().signal,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}

/** Throws the cancellation reason when the work was cancelled. */
export function throwIfCancelled(context: TaskContext): void {
  if (context.signal.aborted) throw context.signal.reason;
}
