// Politeness toward the sites we check: one request at a time per host, and at most the host's rate — kept as a
// pause of 1/rate between the end of one request and the start of the next, so the site sees the gap however
// long a request took to arrive (a gap between starts could shrink on the way). A gate is
// taken per request, never held across a redirect hop or the soft-404 probe, so two checks whose redirects cross
// between two hosts cannot wait on each other.

export interface HostGateOptions {
  /** Requests per second for a host: 1/rate seconds pass between one request's end and the next's start. */
  rateFor(host: string): number;
  /** The clock and the wait (tests and benchmarks use the real ones; injectable all the same). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

interface HostLane {
  /** The tail of the host's queue: resolves when the last request taken has finished. */
  tail: Promise<void>;
  /** When the last request to the host ended (ms). */
  lastEndMs: number;
  /** Requests waiting or running; an idle lane is dropped once its interval has passed. */
  users: number;
}

const PRUNE_AT = 10_000;

/** Per-host queues. `run(host, fn)` starts `fn` when the host is free and its interval has passed. */
export class HostGate {
  readonly #lanes = new Map<string, HostLane>();
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: HostGateOptions) {
    this.#now = options.now ?? (() => performance.now());
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  async run<T>(host: string, fn: () => Promise<T>): Promise<T> {
    let lane = this.#lanes.get(host);
    if (!lane) {
      lane = { tail: Promise.resolve(), lastEndMs: Number.NEGATIVE_INFINITY, users: 0 };
      this.#lanes.set(host, lane);
    }
    const current = lane;
    current.users++;
    const previous = current.tail;
    let release!: () => void;
    current.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      await previous;
      const intervalMs = 1000 / this.options.rateFor(host);
      // Timers may fire a little early by this clock (whole milliseconds from the loop's cached time): wait again
      // until the pause has really passed.
      for (let waitMs = current.lastEndMs + intervalMs - this.#now(); waitMs > 0; ) {
        await this.#sleep(Math.ceil(waitMs));
        waitMs = current.lastEndMs + intervalMs - this.#now();
      }
      return await fn();
    } finally {
      current.lastEndMs = this.#now();
      release();
      current.users--;
      if (this.#lanes.size > PRUNE_AT) this.#prune();
    }
  }

  /** Drops idle lanes whose interval has passed: they have nothing left to remember. */
  #prune(): void {
    const now = this.#now();
    for (const [host, lane] of this.#lanes) {
      if (lane.users === 0 && now - lane.lastEndMs >= 1000 / this.options.rateFor(host))
        this.#lanes.delete(host);
    }
  }
}
