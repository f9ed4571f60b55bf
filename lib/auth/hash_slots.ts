import { AppError } from '../shared/errors.ts';

/**
 * Why a sign-in's hash was not run: the wait queue was full, the client's network already had an attempt
 * waiting, the wait passed its deadline, or the client went away. All answer 503 with Retry-After.
 */
export type HashRefusal = 'full' | 'network' | 'timed_out' | 'abandoned';

/** A sign-in whose password hash is not run now (503 + Retry-After; the login page says to try again). */
export class HashBusyError extends AppError {
  constructor(
    readonly reason: HashRefusal,
    retryAfterSeconds: number,
  ) {
    super(503, 'login-busy', 'Sign-in busy', `Too many sign-ins at once; retry in ${retryAfterSeconds} s.`, {
      headers: { 'Retry-After': String(retryAfterSeconds) },
      retryAfter: retryAfterSeconds,
    });
  }
}

/** What a sign-in brings to the queue: its client's network (one waiting attempt each) and its request's end. */
export interface HashAdmission {
  /** The client network as the login limiter counts it (getClientNetwork). */
  network: string;
  /** Waiters beyond this many (sign-ins only) are refused. */
  maxWaiting: number;
  /** Aborted when the client goes away: a waiting attempt then leaves the queue unhashed. */
  signal?: AbortSignal;
}

/** Counts since the process started, for /metrics. */
export interface HashSlotStats {
  running: number;
  waiting: number;
  /** Sign-in hashes started, and sign-ins refused by reason. */
  outcomes: Record<'hashed' | HashRefusal, number>;
}

interface Waiter {
  start: () => void;
  /** Set for sign-ins: what the bound and the fairness rule count. */
  admission?: HashAdmission;
  /** Takes the waiter out of the queue and refuses it (abort or deadline). */
  leave?: (reason: HashRefusal) => void;
}

/** Retry-After of a refusal: the queue's expected drain time, within these bounds (seconds). */
const RETRY_AFTER_MIN_S = 1;
const RETRY_AFTER_MAX_S = 30;

/**
 * A fixed number of slots for a costly computation (scrypt at 128 MiB each) with a FIFO wait queue. Trusted
 * callers (a signed-in admin setting a password, the bootstrap, a rehash after a successful sign-in) always
 * wait their turn; sign-ins (`admission`) are admitted only while fewer than `maxWaiting` sign-ins wait and
 * none from the same network does, wait at most `maxWaitMs`, and leave the queue when their client goes away.
 * A refused sign-in costs nothing but the refusal: it never holds its password while it waits.
 */
export function createHashSlots(options: { slots: number; maxWaitMs: number }) {
  let running = 0;
  const queue: Waiter[] = [];
  let signInsWaiting = 0;
  const waitingNetworks = new Map<string, number>();
  /** Mean duration of one computation, to tell a refused client when to come back. */
  let meanMs = 500;
  const outcomes: HashSlotStats['outcomes'] = { hashed: 0, full: 0, network: 0, timed_out: 0, abandoned: 0 };

  function retryAfterSeconds(): number {
    const drainMs = ((queue.length + running) * meanMs) / options.slots;
    return Math.min(RETRY_AFTER_MAX_S, Math.max(RETRY_AFTER_MIN_S, Math.ceil(drainMs / 1000)));
  }

  function refuse(reason: HashRefusal): HashBusyError {
    outcomes[reason]++;
    return new HashBusyError(reason, retryAfterSeconds());
  }

  function forget(waiter: Waiter): void {
    const index = queue.indexOf(waiter);
    if (index >= 0) queue.splice(index, 1);
    if (!waiter.admission) return;
    signInsWaiting--;
    const network = waiter.admission.network;
    const left = (waitingNetworks.get(network) ?? 1) - 1;
    if (left > 0) waitingNetworks.set(network, left);
    else waitingNetworks.delete(network);
  }

  /** Resolves once a slot is this caller's (running already counts it); rejects with HashBusyError. */
  function acquire(admission: HashAdmission | undefined): Promise<void> {
    if (admission?.signal?.aborted) return Promise.reject(refuse('abandoned'));
    if (running < options.slots) {
      running++;
      if (admission) outcomes.hashed++;
      return Promise.resolve();
    }
    if (admission && signInsWaiting >= admission.maxWaiting) return Promise.reject(refuse('full'));
    if (admission && waitingNetworks.has(admission.network)) return Promise.reject(refuse('network'));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { start: resolve };
      queue.push(waiter);
      if (!admission) return;
      waiter.admission = admission;
      signInsWaiting++;
      waitingNetworks.set(admission.network, (waitingNetworks.get(admission.network) ?? 0) + 1);
      const onAbort = () => waiter.leave?.('abandoned');
      const timer = setTimeout(() => waiter.leave?.('timed_out'), options.maxWaitMs);
      timer.unref?.();
      admission.signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => {
        clearTimeout(timer);
        admission.signal?.removeEventListener('abort', onAbort);
      };
      waiter.leave = (reason) => {
        settle();
        forget(waiter);
        reject(refuse(reason));
      };
      waiter.start = () => {
        settle();
        outcomes.hashed++;
        resolve();
      };
    });
  }

  function release(): void {
    const next = queue.shift();
    if (!next) {
      running--;
      return;
    }
    // The slot passes straight to the next waiter (running stays as it is).
    forget(next);
    next.start();
  }

  return {
    /** Runs `fn` in a slot, now or after the waiters before it; sign-ins may be refused (HashBusyError). */
    async run<T>(fn: () => Promise<T>, admission?: HashAdmission): Promise<T> {
      await acquire(admission);
      const started = performance.now();
      try {
        return await fn();
      } finally {
        meanMs = meanMs * 0.8 + (performance.now() - started) * 0.2;
        release();
      }
    },
    stats(): HashSlotStats {
      return { running, waiting: queue.length, outcomes: { ...outcomes } };
    },
  };
}
