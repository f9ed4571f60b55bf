import {
  checkGa4Event,
  checkGa4Name,
  type ForwardedClick,
  GA4_EVENT_NAME,
  GA4_MAX_EVENT_AGE_MS,
  GA4_MAX_EVENTS_PER_REQUEST,
  type Ga4Event,
  toGa4Event,
} from './ga4_event.ts';

/** What happened to forwarded clicks, for counters. */
export type Ga4Outcome =
  /** Accepted into the queue. */
  | 'queued'
  /** Delivered to GA4 (2xx). */
  | 'sent'
  /** The queue was full. */
  | 'dropped_full'
  /** Older than GA4 accepts (72 h) by the time it could be sent. */
  | 'dropped_stale'
  /** Would break a Measurement Protocol rule (GA4 would drop it silently). */
  | 'dropped_invalid'
  /** GA4 refused the request outright (a 4xx other than 408/429: wrong endpoint, body too large). */
  | 'dropped_rejected'
  /** Still unsent when the forwarder closed, or recorded after close. */
  | 'dropped_closed'
  /** A request that failed transiently (network, timeout, 429, 5xx) and was tried again. */
  | 'retried';

/**
 * Counters the forwarder reports to (the caller maps them to Prometheus). `queued` and `dropped_full`, counted on
 * the redirect path, arrive in sums at each flush; `stats` is always current.
 */
export interface Ga4Metrics {
  count(outcome: Ga4Outcome, n: number): void;
}

/** The part of a pino logger the forwarder uses. */
export interface Ga4Logger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface Ga4ForwarderOptions {
  /** The web stream's measurement id (`G-XXXXXXX`). */
  measurementId: string;
  /** A Measurement Protocol API secret of that stream; sent in the query string, never logged. */
  apiSecret: string;
  /** Default `https://www.google-analytics.com`; `https://region1.google-analytics.com` keeps data in the EU. */
  endpoint?: string;
  /** Default `short_link_click`. */
  eventName?: string;
  /** Forward QR scans as well as human clicks (default true). */
  includeQr?: boolean;
  /** Clicks held at most; beyond it new ones are dropped and counted (default 10,000). */
  maxQueue?: number;
  /** Events per request, at most 25 (default 25). */
  batchSize?: number;
  /** How often the queue is sent (default 10 s). */
  flushIntervalMs?: number;
  /** A flush starts early once this many clicks wait (default 100). */
  flushAtEvents?: number;
  /** Attempts per request within one flush; after that the batch waits for the next flush (default 3). */
  maxAttempts?: number;
  /** First retry delay, doubling (default 500 ms). */
  baseDelayMs?: number;
  /** Longest retry delay (default 5 s). */
  maxDelayMs?: number;
  /** Per-request deadline (default 5 s). */
  timeoutMs?: number;
  /** Clicks older than this are dropped (default 72 h less a minute of margin). */
  maxEventAgeMs?: number;
  fetch?: typeof fetch;
  logger?: Ga4Logger;
  metrics?: Ga4Metrics;
  /** Clock (tests). */
  now?: () => number;
}

/** Forwards clicks to GA4 in the background, in batches; the redirect path only queues. */
export interface Ga4Forwarder {
  /**
   * Queues one click: O(1), synchronous, never throws, never waits. False when it is not forwarded: not a human
   * or QR click, the queue is full (counted), or the forwarder is closed (counted).
   */
  record(click: ForwardedClick): boolean;
  /**
   * `record` for `count` clicks alike (an aggregate of the click pipeline): each becomes its own event, so GA4's
   * event count is our click count. Returns how many were queued; the rest are counted as dropped_full (or
   * dropped_closed). O(count), bounded by the queue's room.
   */
  recordMany(click: ForwardedClick, count: number): number;
  /** Sends what is queued now; resolves when done (a transient failure keeps the batch for the next flush). */
  flush(): Promise<void>;
  /** Stops the timer, flushes once more, and counts what is still unsent as dropped_closed. */
  close(): Promise<void>;
  /** Clicks waiting. */
  readonly pending: number;
  /** Running totals per outcome (also reported to `metrics`). */
  readonly stats: Readonly<Record<Ga4Outcome, number>>;
}

export const GA4_ENDPOINT = 'https://www.google-analytics.com';
const MEASUREMENT_ID = /^G-[A-Z0-9]{4,20}$/;

/**
 * A random pseudonymous `client_id` for one request, in gtag's `<random>.<seconds>` shape. A redirect carries no
 * cookie, so a stable per-reader id would have to be derived from the IP or user agent — a fingerprint, keyed or
 * not — and a stable id from coarse data (day, country) would invent "users" made of many readers. So every
 * request gets a fresh one: it identifies nobody and links nothing across requests; GA4's user and session
 * counts then count requests, and the figures to read are event counts by their params.
 */
function newClientId(nowMs: number): string {
  const random = crypto.getRandomValues(new Uint32Array(1))[0]!;
  return `${random}.${Math.floor(nowMs / 1000)}`;
}

/** Creates the forwarder (only when GA4_MEASUREMENT_ID and GA4_API_SECRET are both set). */
export function createGa4Forwarder(options: Ga4ForwarderOptions): Ga4Forwarder {
  if (!MEASUREMENT_ID.test(options.measurementId)) {
    throw new Error('GA4 measurement id must look like G-XXXXXXXXXX (a web stream id)');
  }
  if (!options.apiSecret || /\s/.test(options.apiSecret))
    throw new Error('GA4 API secret must be a non-empty token');
  const eventName = options.eventName ?? GA4_EVENT_NAME;
  const eventNameProblem = checkGa4Name(eventName, 'event');
  if (eventNameProblem) throw new Error(`GA4 ${eventNameProblem}`);

  const fetchFn = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const includeQr = options.includeQr ?? true;
  const maxQueue = Math.max(1, options.maxQueue ?? 10_000);
  const batchSize = Math.min(
    GA4_MAX_EVENTS_PER_REQUEST,
    Math.max(1, options.batchSize ?? GA4_MAX_EVENTS_PER_REQUEST),
  );
  const flushAtEvents = Math.max(batchSize, options.flushAtEvents ?? 100);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 5_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxEventAgeMs = Math.min(
    options.maxEventAgeMs ?? GA4_MAX_EVENT_AGE_MS - 60_000,
    GA4_MAX_EVENT_AGE_MS,
  );
  const url = `${(options.endpoint ?? GA4_ENDPOINT).replace(/\/+$/, '')}/mp/collect?measurement_id=${encodeURIComponent(options.measurementId)}&api_secret=${encodeURIComponent(options.apiSecret)}`;

  const stats: Record<Ga4Outcome, number> = {
    queued: 0,
    sent: 0,
    dropped_full: 0,
    dropped_stale: 0,
    dropped_invalid: 0,
    dropped_rejected: 0,
    dropped_closed: 0,
    retried: 0,
  };
  const count = (outcome: Ga4Outcome, n = 1) => {
    if (n <= 0) return;
    stats[outcome] += n;
    options.metrics?.count(outcome, n);
  };
  // record() runs on the redirect path: it only bumps these, and they reach `metrics` at the next flush.
  const unreported = { queued: 0, dropped_full: 0 };
  const reportHotCounts = () => {
    for (const outcome of ['queued', 'dropped_full'] as const) {
      if (unreported[outcome] > 0) options.metrics?.count(outcome, unreported[outcome]);
      unreported[outcome] = 0;
    }
  };

  let queue: ForwardedClick[] = [];
  let closed = false;
  let running: Promise<void> | null = null;
  const timer = setInterval(() => void flush(), options.flushIntervalMs ?? 10_000);
  (timer as { unref?: () => void }).unref?.();

  /** Up to batchSize sendable events from the head of the queue; stale and invalid ones are dropped on the way. */
  function takeBatch(): { clicks: ForwardedClick[]; events: Ga4Event[] } {
    const clicks: ForwardedClick[] = [];
    const events: Ga4Event[] = [];
    const at = now();
    let taken = 0;
    while (taken < queue.length && events.length < batchSize) {
      const click = queue[taken++]!;
      if (at - click.atMs > maxEventAgeMs) {
        count('dropped_stale');
        continue;
      }
      const event = toGa4Event(click, eventName);
      const problem = checkGa4Event(event, at);
      if (problem) {
        count('dropped_invalid');
        options.logger?.warn({ problem }, 'GA4 event dropped: it would break a Measurement Protocol rule');
        continue;
      }
      clicks.push(click);
      events.push(event);
    }
    queue = queue.slice(taken);
    return { clicks, events };
  }

  /** Sends one batch: 'sent', 'later' (transient failure after every attempt) or 'rejected'. */
  async function send(events: Ga4Event[]): Promise<'sent' | 'later' | 'rejected'> {
    const body = JSON.stringify({
      client_id: newClientId(now()),
      // No consent was asked on a redirect: nothing here may feed ads.
      consent: { ad_user_data: 'DENIED', ad_personalization: 'DENIED' },
      events,
    });
    for (let attempt = 1; ; attempt++) {
      let failure: string;
      try {
        const res = await fetchFn(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        await res.arrayBuffer();
        if (res.status >= 200 && res.status < 300) return 'sent';
        if (res.status !== 408 && res.status !== 429 && res.status < 500) {
          options.logger?.error(
            { status: res.status, events: events.length },
            'GA4 refused a Measurement Protocol request',
          );
          return 'rejected';
        }
        failure = `HTTP ${res.status}`;
      } catch (error) {
        const e = error as Error & { cause?: { code?: string } };
        failure =
          e.name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : (e.cause?.code ?? e.message);
      }
      if (attempt >= maxAttempts) {
        options.logger?.warn(
          { failure, events: events.length, attempts: attempt },
          'GA4 unreachable; batch kept for the next flush',
        );
        return 'later';
      }
      count('retried');
      const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
      await new Promise((r) => setTimeout(r, backoff / 2 + (Math.random() * backoff) / 2));
    }
  }

  async function drain(): Promise<void> {
    reportHotCounts();
    while (queue.length > 0) {
      const { clicks, events } = takeBatch();
      if (events.length === 0) continue;
      const outcome = await send(events);
      if (outcome === 'sent') count('sent', events.length);
      else if (outcome === 'rejected') count('dropped_rejected', events.length);
      else {
        // Back to the head, in order; the queue may exceed maxQueue by at most this one batch.
        queue = clicks.concat(queue);
        return;
      }
    }
  }

  function flush(): Promise<void> {
    if (!running) {
      running = drain()
        .catch((error) => options.logger?.error({ err: error }, 'GA4 flush failed'))
        .finally(() => {
          running = null;
        });
    }
    return running;
  }

  return {
    record(click) {
      try {
        if (click.kind !== 'human' && !(includeQr && click.kind === 'qr')) return false;
        if (closed) {
          count('dropped_closed');
          return false;
        }
        if (queue.length >= maxQueue) {
          stats.dropped_full++;
          unreported.dropped_full++;
          return false;
        }
        queue.push(click);
        stats.queued++;
        unreported.queued++;
        if (queue.length >= flushAtEvents && !running) void flush();
        return true;
      } catch {
        return false;
      }
    },
    recordMany(click, clicks) {
      const n = Math.max(0, Math.trunc(clicks));
      if (n === 0) return 0;
      if (click.kind !== 'human' && !(includeQr && click.kind === 'qr')) return 0;
      if (closed) {
        count('dropped_closed', n);
        return 0;
      }
      const room = Math.max(0, Math.min(n, maxQueue - queue.length));
      // The same object n times: the queue holds references, and events are built when a batch is sent.
      for (let i = 0; i < room; i++) queue.push(click);
      stats.queued += room;
      unreported.queued += room;
      if (n > room) {
        stats.dropped_full += n - room;
        unreported.dropped_full += n - room;
      }
      if (queue.length >= flushAtEvents && !running) void flush();
      return room;
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      await flush();
      reportHotCounts();
      if (queue.length > 0) {
        count('dropped_closed', queue.length);
        options.logger?.warn({ events: queue.length }, 'GA4 forwarder closed with unsent clicks');
        queue = [];
      }
    },
    get pending() {
      return queue.length;
    },
    stats,
  };
}
