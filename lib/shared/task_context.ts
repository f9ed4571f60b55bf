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

/**
 * Runs `work` while `context` heartbeats on its own every `everyMs`, repeating the last details `work` reported
 * (at first, the resumed ones, so a retry's cursor is never overwritten). With it, the heartbeat timeout can be
 * short: a step lost with its worker (killed, or a task handed to a poll the worker dropped as it stopped) is
 * retried within that timeout, while a live step waiting on one slow request is not timed out.
 *
 * With `stallMs`, the beats stop once `work` has reported nothing for that long, so a step that hangs is still
 * timed out and retried, as it was when only its own progress heartbeated.
 */
export async function keepingAlive<T>(
  context: TaskContext,
  everyMs: number,
  work: (context: TaskContext) => Promise<T>,
  options: { stallMs?: number } = {},
): Promise<T> {
  let details: unknown = context.resumed;
  let reportedAt = Date.now();
  const tracked: TaskContext = {
    heartbeat: (next) => {
      details = next;
      reportedAt = Date.now();
      context.heartbeat(next);
    },
    resumed: context.resumed,
    attempt: context.attempt,
    signal: context.signal,
    sleep: (ms) => context.sleep(ms),
  };
  const beat = () => {
    if (options.stallMs !== undefined && Date.now() - reportedAt > options.stallMs) return;
    context.heartbeat(details);
  };
  beat();
  const timer = setInterval(beat, everyMs);
  try {
    return await work(tracked);
  } finally {
    clearInterval(timer);
  }
}
