// A breaker for a dependency the redirect path waits on: after a run of failures it refuses at once, and a probe
// in the background, never a visitor's request, decides when to let requests through again.

export interface BreakerOptions {
  /** Failures in a row that open the breaker. */
  failures: number;
  /** How long it stays open before the first probe; doubled after each failed probe, up to maxOpenMs. */
  openMs: number;
  maxOpenMs: number;
  /**
   * One call to the dependency, bounded by its own deadline: resolves when the dependency answered, rejects
   * otherwise. Never more than one runs at a time.
   */
  probe: () => Promise<unknown>;
  /** Told when the breaker opens (with the failure that opened it) and when a probe or a call closes it. */
  onOpen?: (error: unknown) => void;
  onClose?: () => void;
}

/**
 * The breaker's state, read on the hot path as a plain field (`open`), and its two reports: `succeeded` after a
 * call answered, `failed` after one did not. Calls that started before it opened still report; a success closes
 * it (the dependency answered), a failure while open changes nothing.
 */
export interface Breaker {
  /** Calls are refused (answered at once without the dependency) while this is true. */
  readonly open: boolean;
  succeeded(): void;
  failed(error: unknown): void;
  /** Probes no more (the owner is closing). */
  stop(): void;
}

/**
 * A breaker whose half-open step is a probe of its own. The breakers it replaces let every request through
 * again once a fixed second had passed, so during a long outage a batch of requests waited the whole deadline
 * (3 s on the Postgres rung) every few seconds, until five of them had failed again. Here, once open, no request
 * waits on the dependency: a probe runs after openMs, then after twice as long after each failure (up to
 * maxOpenMs, so a recovered dependency is back within that), and the first success closes it.
 *
 * Written here rather than taken from a library (opossum is the usual one): those wrap every call in promises,
 * timers and events of their own, and this is read on the redirect hot path, where each promise and closure per
 * request has been a measured share of the CPU. Here a request costs one field read and, after its answer, one
 * call.
 */
export function createBreaker(options: BreakerOptions): Breaker {
  let failures = 0;
  let waitMs = options.openMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let probing = false;
  let stopped = false;

  const state = {
    open: false,
    succeeded() {
      failures = 0;
      if (state.open) close();
    },
    failed(error: unknown) {
      if (state.open || ++failures < options.failures) return;
      failures = 0;
      state.open = true;
      waitMs = options.openMs;
      options.onOpen?.(error);
      schedule();
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };

  function close() {
    state.open = false;
    failures = 0;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    options.onClose?.();
  }

  function schedule() {
    if (stopped || probing || timer !== undefined) return;
    timer = setTimeout(probe, waitMs);
    // The probe must not keep a process alive that has nothing else to do.
    timer.unref?.();
  }

  function probe() {
    timer = undefined;
    if (stopped || !state.open) return;
    probing = true;
    let answer: Promise<unknown>;
    try {
      answer = options.probe();
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer.then(
      () => {
        probing = false;
        if (state.open) close();
      },
      () => {
        probing = false;
        if (!state.open) return;
        waitMs = Math.min(waitMs * 2, options.maxOpenMs);
        schedule();
      },
    );
  }

  return state;
}
