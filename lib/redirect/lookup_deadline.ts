// The resolver's deadlines: one timer per deadline length, however many lookups are waiting on it.

/** What a lookup that missed its deadline rejects with (the rungs tell a slow layer from a failing one by it). */
export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} took longer than ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/** What a settled deadline entry holds instead of its promise's resolving functions. */
function settledAlready(): void {}

/**
 * A deadline of `ms` for any number of promises, kept by one timer: `within(p)` settles as `p` does, or rejects
 * with a TimeoutError `ms` after it was called. A setTimeout, a clearTimeout, a Promise.race and a finally per
 * lookup were a visible share of the serving-store path's CPU. Every deadline of one instance has the same
 * length, so they fall due in the order they were set: a list in that order, whose first entry the timer
 * waits for. An entry leaves the list the moment its promise settles, so the list holds only what is still
 * pending (about the lookups in flight), and nothing of a settled lookup outlives it: an array queue that kept
 * settled entries until the timer passed them (3 s on the Postgres path) made every lookup's entry outlive two
 * scavenges and be promoted, for the old generation's marker to trace.
 *
 * `onSettle` runs when `p` settles, in time or not. `onValue` and `onError` (the TimeoutError included) turn
 * the outcome into the returned promise's value, or throw its rejection: the caller's work runs in this one
 * reaction on `p` instead of a `then` chained after it (each reaction and promise on the Postgres path was
 * a measurable share of its CPU).
 */
export function createDeadline(ms: number, what: string) {
  type Entry = {
    at: number;
    /** Settled (and so out of the list). */
    done: boolean;
    prev: Entry | undefined;
    next: Entry | undefined;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
    onValue: ((value: never) => unknown) | undefined;
    onError: ((error: unknown) => unknown) | undefined;
  };
  let first: Entry | undefined;
  let last: Entry | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (timer !== undefined || first === undefined) return;
    timer = setTimeout(expire, Math.max(0, first.at - performance.now()));
    // The promises it watches keep the process alive if anything does; the timer alone must not.
    timer.unref?.();
  };
  const finish = (entry: Entry, ok: boolean, outcome: unknown) => {
    const { resolve, reject, prev, next } = entry;
    const handle = ok ? entry.onValue : entry.onError;
    entry.done = true;
    if (prev === undefined) first = next;
    else prev.next = next;
    if (next === undefined) last = prev;
    else next.prev = prev;
    entry.prev = entry.next = undefined;
    // After a timeout the query still runs and its reactions hold the entry: they must not hold the caller.
    entry.resolve = entry.reject = settledAlready;
    entry.onValue = entry.onError = undefined;
    if (handle === undefined) {
      if (ok) resolve(outcome);
      else reject(outcome);
      return;
    }
    try {
      resolve(handle(outcome as never));
    } catch (error) {
      reject(error);
    }
  };
  const expire = () => {
    timer = undefined;
    const now = performance.now();
    while (first !== undefined && first.at <= now) finish(first, false, new TimeoutError(what, ms));
    arm();
  };
  function within<T>(promise: Promise<T>, onSettle?: () => void): Promise<T>;
  function within<T, R>(
    promise: Promise<T>,
    onSettle: (() => void) | undefined,
    onValue: (value: T) => R,
    onError: (error: unknown) => R,
  ): Promise<R>;
  function within<T, R>(
    promise: Promise<T>,
    onSettle?: () => void,
    onValue?: (value: T) => R,
    onError?: (error: unknown) => R,
  ): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const entry: Entry = {
        at: performance.now() + ms,
        done: false,
        prev: last,
        next: undefined,
        resolve: resolve as (value: unknown) => void,
        reject,
        onValue: onValue as ((value: never) => unknown) | undefined,
        onError,
      };
      if (last === undefined) first = entry;
      else last.next = entry;
      last = entry;
      arm();
      promise.then(
        (value) => {
          onSettle?.();
          if (!entry.done) finish(entry, true, value);
        },
        (error: unknown) => {
          onSettle?.();
          if (!entry.done) finish(entry, false, error);
        },
      );
    });
  }
  return within;
}

/** `within` of one deadline length (createDeadline). */
export type Deadline = ReturnType<typeof createDeadline>;
