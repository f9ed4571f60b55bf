// Many callers, few signals. The post events of an election night each queue one code for the sync queue's
// drainer and wake it (ADR 0098): at 20 updates a second, a signal each would be 20 workflow tasks a second on
// the drainer, each only to set its wake flag, which is what the per-link workflows cost before. Here a kick
// asked for while another is being sent, or within the window after the last one began, waits and shares the
// next one. The drainer reads the whole queue when woken, so one kick carries every code queued before it began.
// A post event's step does not wait for it (`kickSoon`): a workflow task held open for the window would hold one
// of the worker's workflow task slots with it, and at 20 events a second the slots, not the cores, ran out.
import type { WorkflowClient } from '@temporalio/client';
import type { SyncQueueKicker } from './link_sync.ts';

/** How often one process signals the drainer at most, when kicks come continuously. */
export const KICK_WINDOW_MS = 500;

/** The first wait before a failed background kick is sent again; it doubles up to the second. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 60_000;

export interface CoalescedKicker extends SyncQueueKicker {
  /**
   * Asks for a kick and returns at once: the kick is sent within the window, shared with the others of the
   * moment. A failed send is sent again, one retry at a time for all of them, waiting 1 s doubling to 1 min,
   * until one goes through (`onError` hears of each failure).
   */
  kickSoon(reason: string): void;
}

/**
 * Wraps `send` so that each call settles with a send that began after the call (what the caller queued before
 * calling is then visible to the woken workflow), while sends begin at most once per `windowMs`. A failed send
 * fails every call that shared it. The reason sent is the first caller's, with how many others shared it.
 */
export function coalesceKicks(
  send: (reason: string) => Promise<unknown>,
  windowMs: number = KICK_WINDOW_MS,
  onError: (error: unknown, reason: string) => void = () => {},
): CoalescedKicker {
  let lastStartMs = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | null = null;
  let waiting: { reasons: string[]; done: Promise<void> } | null = null;

  function begin(reasons: string[]): Promise<void> {
    lastStartMs = Date.now();
    const reason = reasons.length === 1 ? reasons[0]! : `${reasons[0]} (and ${reasons.length - 1} more)`;
    const sent = send(reason).then(() => undefined);
    const tracked = sent.then(
      () => undefined,
      () => undefined,
    );
    inFlight = tracked;
    void tracked.then(() => {
      if (inFlight === tracked) inFlight = null;
    });
    return sent;
  }

  async function later(reasons: string[]): Promise<void> {
    // While this one waits, every other call joins it, so no other send can begin in between.
    if (inFlight) await inFlight;
    const delayMs = lastStartMs + windowMs - Date.now();
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    waiting = null;
    await begin(reasons);
  }

  function kickSyncQueue(reason: string): Promise<void> {
    if (waiting) {
      waiting.reasons.push(reason);
      return waiting.done;
    }
    if (!inFlight && Date.now() - lastStartMs >= windowMs) return begin([reason]);
    const reasons = [reason];
    const done = later(reasons);
    waiting = { reasons, done };
    return done;
  }

  // One retry for every failed background kick: the codes are in Postgres, so any kick that goes through carries
  // all of them. Unreferenced: a process that stops leaves its codes to the next worker's start.
  let retry: ReturnType<typeof setTimeout> | null = null;
  let retryMs = RETRY_FIRST_MS;
  function kickSoon(reason: string): void {
    kickSyncQueue(reason).then(
      () => {
        retryMs = RETRY_FIRST_MS;
      },
      (error: unknown) => {
        onError(error, reason);
        if (retry) return;
        retry = setTimeout(() => {
          retry = null;
          kickSoon(`retry: ${reason}`);
        }, retryMs);
        retry.unref?.();
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      },
    );
  }

  return { kickSyncQueue, kickSoon };
}

const perClient = new WeakMap<WorkflowClient, Map<string, CoalescedKicker>>();

/** The one coalescing kicker of this process for a client and task queue (activities ask for it per call). */
export function sharedCoalescedKicker(
  client: WorkflowClient,
  taskQueue: string,
  make: () => CoalescedKicker,
): CoalescedKicker {
  const byQueue = perClient.get(client) ?? new Map<string, CoalescedKicker>();
  perClient.set(client, byQueue);
  let kicker = byQueue.get(taskQueue);
  if (!kicker) {
    kicker = make();
    byQueue.set(taskQueue, kicker);
  }
  return kicker;
}
