// GA4 from the click pipeline, never from the redirect: the click buffer (lib/clicks/click_buffer.ts) hands
// over each batch of aggregates once it is written to click_counts, and this feed turns the human clicks (and
// QR scans) among them into Measurement Protocol events at the forwarder (ga4_forwarder.ts), which batches,
// retries and bounds them. A redirect does exactly what it did without GA4.
//
// One event per click: an aggregate of N clicks (same link, UTC hour, kind, country, referrer host, within one
// flush interval) becomes N identical events stamped with its latest click. So GA4's event count for
// `short_link_click` is our count of people's clicks, and an editor comparing the two sees the same number
// (less any drops, which are counted). One event carrying a count would need a custom metric in GA4 to mean
// anything and would make the event count a count of aggregates, a number nobody can interpret; a cap per
// aggregate would silently undercount exactly the links that matter most. The queue's bound is the cap.

import type { LinkResolver } from '../redirect/link_resolver.ts';
import { decideRedirect, type RedirectSettings } from '../redirect/redirect_policy.ts';
import type { ServingRecord } from '../redirect/serving_record.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import type { Metrics } from '../shared/metrics.ts';
import type { ClickCountRow } from '../stores/click_counts_store.ts';
import { createGa4Forwarder, type Ga4Forwarder } from './ga4_forwarder.ts';

/** Aggregates waiting for their destination lookups, at most; beyond it their clicks are dropped and counted. */
const PENDING_ROWS_MAX = 20_000;
/** Destination lookups that miss the resolver's cache, in flight at once. */
const LOOKUP_CONCURRENCY = 4;
/** A failing lookup is logged at most this often. */
const FAILURE_LOG_INTERVAL_MS = 30_000;

export interface Ga4ClickFeedOptions {
  forwarder: Ga4Forwarder;
  /** Where each code leads now: its cached serving record, else the resolver's ladder. */
  resolver: LinkResolver;
  /** The deployment's redirect settings: the destination sent is the Location readers got (UTM included). */
  redirect: RedirectSettings;
  /** Forward QR scans too (GA4_INCLUDE_QR). */
  includeQr: boolean;
  logger: Pick<Logger, 'warn'>;
  /** Counts clicks dropped before reaching the forwarder (its own drops it counts itself). */
  countDropped(clicks: number): void;
}

/** Consumes written click batches (ClickBufferOptions.onWritten) and forwards their people's clicks to GA4. */
export interface Ga4ClickFeed {
  /** Takes a written batch: synchronous and cheap (filter and queue); lookups and sending happen after. */
  written(rows: readonly ClickCountRow[]): void;
  /** Resolves when every batch taken so far is queued at the forwarder and a send has been attempted. */
  flush(): Promise<void>;
  /** flush(), then the forwarder's close() (what is still unsent is counted as dropped_closed). */
  close(): Promise<void>;
}

/** The Location a click's reader was sent to (its host and utm_* values become event params). */
function destinationOf(record: ServingRecord | null, code: string, atMs: number, redirect: RedirectSettings) {
  if (!record) return '';
  const decision = decideRedirect(code, record, atMs, redirect);
  return decision.location ?? decision.page?.destination ?? record.url;
}

/** Creates the feed; GA4 is off (no feed) unless GA4_MEASUREMENT_ID and GA4_API_SECRET are set. */
export function createGa4ClickFeed(options: Ga4ClickFeedOptions): Ga4ClickFeed {
  const { forwarder, resolver } = options;
  let pending: ClickCountRow[] = [];
  let draining: Promise<void> | null = null;
  let lastFailureLog = 0;

  async function recordOf(code: string): Promise<ServingRecord | null> {
    const cached = resolver.peek?.(code);
    if (cached !== undefined) return cached;
    try {
      return await resolver.resolve(code);
    } catch (err) {
      if (Date.now() - lastFailureLog > FAILURE_LOG_INTERVAL_MS) {
        lastFailureLog = Date.now();
        options.logger.warn({ err, code }, 'GA4: destination lookup failed; the event goes without it');
      }
      return null;
    }
  }

  async function forward(rows: ClickCountRow[]): Promise<void> {
    const destinations = new Map<string, Promise<ServingRecord | null>>();
    // Lookups of codes the cache does not hold run a few at a time; cached ones answer at once.
    const codes = [...new Set(rows.map((r) => r.code))];
    for (let i = 0; i < codes.length; i += LOOKUP_CONCURRENCY) {
      const group = codes.slice(i, i + LOOKUP_CONCURRENCY).map((code) => {
        const lookup = recordOf(code);
        destinations.set(code, lookup);
        return lookup;
      });
      await Promise.all(group);
    }
    for (const row of rows) {
      const record = await destinations.get(row.code)!;
      forwarder.recordMany(
        {
          code: row.code,
          kind: row.kind,
          destination: destinationOf(record, row.code, row.lastClickMs, options.redirect),
          country: row.country,
          referrerHost: row.referrerHost,
          atMs: row.lastClickMs,
        },
        row.clicks,
      );
    }
  }

  async function drain(): Promise<void> {
    try {
      while (pending.length > 0) {
        const rows = pending;
        pending = [];
        await forward(rows);
      }
      await forwarder.flush();
    } catch (err) {
      // Not expected (lookups and the forwarder do not throw); never let it reach the process.
      options.logger.warn({ err }, 'GA4: forwarding a click batch failed');
    }
  }

  function start(): Promise<void> {
    draining ??= drain().finally(() => {
      draining = null;
    });
    return draining;
  }

  return {
    written(rows) {
      let dropped = 0;
      for (const row of rows) {
        if (row.kind !== 'human' && !(options.includeQr && row.kind === 'qr')) continue;
        if (pending.length >= PENDING_ROWS_MAX) dropped += row.clicks;
        else pending.push(row);
      }
      if (dropped > 0) options.countDropped(dropped);
      if (pending.length > 0) void start();
    },
    async flush() {
      // A drain in progress may have started before the latest rows arrived: wait, then drain again.
      if (draining) await draining;
      await start();
    },
    async close() {
      await this.flush();
      await forwarder.close();
    },
  };
}

/**
 * The feed this configuration asks for (GA4_MEASUREMENT_ID and GA4_API_SECRET set), with its forwarder
 * reporting to `lifeline_ga4_events_total`; undefined when GA4 is off.
 */
export function createConfiguredGa4Feed(
  config: Pick<Config, 'ga4' | 'redirect'>,
  deps: { resolver: LinkResolver; metrics: Pick<Metrics, 'ga4Events'>; logger: Logger },
): Ga4ClickFeed | undefined {
  const ga4 = config.ga4;
  if (!ga4) return undefined;
  const metrics = deps.metrics.ga4Events;
  const forwarder = createGa4Forwarder({
    measurementId: ga4.measurementId,
    apiSecret: ga4.apiSecret,
    endpoint: ga4.endpoint,
    includeQr: ga4.includeQr,
    maxQueue: ga4.maxQueue,
    logger: deps.logger,
    metrics: { count: (outcome, n) => metrics.inc({ outcome }, n) },
  });
  return createGa4ClickFeed({
    forwarder,
    resolver: deps.resolver,
    redirect: config.redirect,
    includeQr: ga4.includeQr,
    logger: deps.logger,
    countDropped: (n) => metrics.inc({ outcome: 'dropped_full' }, n),
  });
}
