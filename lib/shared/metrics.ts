import {
  type Aggregator,
  type CollectFunction,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricType,
  type MetricValueWithName,
  Registry,
} from 'prom-client';
import { scrapeRead } from './scrape_read.ts';

export type { Registry };

/** The Prometheus metrics of one process; each app gets its own registry so tests can run several. */
export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'route' | 'method' | 'status'>;
  httpDuration: Histogram<'route'>;
  redirects: Counter<'outcome'>;
  lookups: Counter<'layer' | 'result'>;
  lookupQueries: Counter<'shape'>;
  servingStoreErrors: Counter<'operation'>;
  /** lifeline_resolver_stale_served_total: records served past their TTL while a refresh ran (RESOLVER_STALE_MAX_MS). */
  resolverStaleServed: Counter;
  /** lifeline_resolver_refresh_total: those refreshes, by how they ended. */
  resolverRefreshes: Counter<'result'>;
  clicksDropped: Counter;
  clickFlushes: Counter<'result'>;
  clickFlushSeconds: Histogram;
  clickBufferKeys: Gauge;
  clickFlushIntervalSeconds: Gauge;
  webhooks: Counter<'event' | 'outcome'>;
  /** Bytes of webhook and backfill bodies being read now (of WEBHOOK_BODIES_MAX_BYTES). */
  webhookBodyBytes: Gauge;
  /** lifeline_redirect_duration_seconds: every short-host answer, arrival to answer written (see `observeMs`). */
  redirectDuration: BucketedHistogram;
  ga4Events: Counter<'outcome'>;
}

/**
 * Creates the metrics, with Node's default process metrics when `defaults` is set — under their standard names
 * (`process_cpu_seconds_total`, `nodejs_eventloop_lag_seconds`, …), as the usual Node.js dashboards expect.
 */
export function createMetrics(options: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaults) collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'lifeline_http_requests_total',
      help: 'HTTP requests served, by route, method and status.',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'lifeline_http_request_duration_seconds',
      help: 'HTTP request duration by route (API and UI; redirects are counted in lifeline_redirects_total).',
      labelNames: ['route'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    redirects: new Counter({
      name: 'lifeline_redirects_total',
      help:
        'Short-host answers by outcome (redirect, not_found, gone, expired, blocked, warn, preview; archived: a ' +
        'dead destination answered with its archived copy; tampered: a stored target broke the target rule and ' +
        'answered 404).',
      labelNames: ['outcome'],
      registers: [registry],
      collect: collectPending,
    }),
    lookups: new Counter({
      name: 'lifeline_link_lookups_total',
      help:
        'Resolver lookups by layer (lru, serving_store, postgres, singleflight) and result (hit, miss, ' +
        'negative, error, skipped: serving store bypassed while failing; shared: joined a lookup in flight; ' +
        'tampered: a record whose target breaks the target rule, refused).',
      labelNames: ['layer', 'result'],
      registers: [registry],
      collect: collectPending,
    }),
    lookupQueries: new Counter({
      name: 'lifeline_link_lookup_queries_total',
      help:
        'Statements the resolver sent to Postgres, by shape (single: one code; batch: the lookups that queued ' +
        'for a connection, sent together). Postgres lookups ÷ statements is the batching under load.',
      labelNames: ['shape'],
      registers: [registry],
      collect: collectPending,
    }),
    servingStoreErrors: new Counter({
      name: 'lifeline_serving_store_errors_total',
      help: 'Serving-store calls that failed and fell through, by operation (get, get_timeout, refill).',
      labelNames: ['operation'],
      registers: [registry],
    }),
    resolverStaleServed: new Counter({
      name: 'lifeline_resolver_stale_served_total',
      help:
        'Redirect lookups answered with an LRU record past RESOLVER_CACHE_TTL_MS (within RESOLVER_STALE_MAX_MS) ' +
        'while one background refresh of it ran.',
      registers: [registry],
      collect: collectPending,
    }),
    resolverRefreshes: new Counter({
      name: 'lifeline_resolver_refresh_total',
      help:
        'Background refreshes of stale LRU records, by result (ok: the answer replaced the record; error: the ' +
        'ladder failed, the stale record is served on until its window ends; invalidated: the code changed ' +
        'meanwhile, the answer was discarded).',
      labelNames: ['result'],
      registers: [registry],
      collect: collectPending,
    }),
    clicksDropped: new Counter({
      name: 'lifeline_clicks_dropped_total',
      help: 'Clicks dropped because the in-memory buffer was full.',
      registers: [registry],
    }),
    clickFlushes: new Counter({
      name: 'lifeline_click_flushes_total',
      help: 'Click buffer batches written to click_counts, by result (ok, error: kept and retried).',
      labelNames: ['result'],
      registers: [registry],
    }),
    clickFlushSeconds: new Histogram({
      name: 'lifeline_click_flush_duration_seconds',
      help: 'Time to write one batch of click aggregates.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    clickBufferKeys: new Gauge({
      name: 'lifeline_click_buffer_keys',
      help: 'Distinct click aggregates waiting in memory after the last flush.',
      registers: [registry],
    }),
    clickFlushIntervalSeconds: new Gauge({
      name: 'lifeline_click_flush_interval_seconds',
      help: 'Wait before the next timed click flush: CLICK_FLUSH_INTERVAL_MS, stretched to ten times the last flush (at most CLICK_FLUSH_MAX_INTERVAL_MS).',
      registers: [registry],
    }),
    webhooks: new Counter({
      name: 'lifeline_webhooks_total',
      help: 'WordPress webhook deliveries by event and outcome.',
      labelNames: ['event', 'outcome'],
      registers: [registry],
    }),
    webhookBodyBytes: new Gauge({
      name: 'lifeline_webhook_body_bytes_in_flight',
      help: 'Bytes of webhook and backfill bodies this process holds for reading now (at most WEBHOOK_BODIES_MAX_BYTES).',
      registers: [registry],
    }),
    redirectDuration: new BucketedHistogram({
      name: 'lifeline_redirect_duration_seconds',
      help:
        'Short-host answers (GET/HEAD /{code}: every outcome, 503s included), from the request reaching the ' +
        'server to the answer written.',
      bucketsSeconds: REDIRECT_DURATION_BUCKETS_SECONDS,
      registers: [registry],
    }),
    ga4Events: new Counter({
      name: 'lifeline_ga4_events_total',
      help:
        'Clicks forwarded to GA4 (one event each) by outcome: queued, sent, dropped_full (queue full), ' +
        'dropped_stale (older than 72 h), dropped_invalid, dropped_rejected (4xx), dropped_closed (shutdown); ' +
        'retried counts requests tried again.',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}

/** A registry with only Node's default process metrics (the worker: its own metrics come from the Temporal SDK). */
export function createProcessMetrics(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Upper bounds of lifeline_redirect_duration_seconds; the latency SLO counts the 0.05 bucket (50 ms). */
export const REDIRECT_DURATION_BUCKETS_SECONDS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
] as const;

/**
 * A histogram without labels whose observations cost the hot path a few compares and an array increment: counts
 * sit in a fixed array (one slot per bucket and one for +Inf) with a running sum, and become Prometheus's
 * cumulative `_bucket`/`_sum`/`_count` series only when the registry is read. prom-client's own `observe` would
 * hash a label set and walk an object per call. It is a prom-client Histogram for the registry (name, help,
 * type), with the two read methods the registry calls answered from the array.
 */
export class BucketedHistogram extends Histogram {
  /** Upper bounds in milliseconds (observations arrive as performance.now() differences). */
  private readonly boundsMs: Float64Array;
  private readonly bounds: readonly number[];
  /** Per-bucket (not cumulative) counts; the last slot counts what exceeds every bound. */
  private readonly counts: Float64Array;
  private sumMs = 0;

  constructor(options: {
    name: string;
    help: string;
    bucketsSeconds: readonly number[];
    registers: Registry[];
  }) {
    super({
      name: options.name,
      help: options.help,
      buckets: [...options.bucketsSeconds],
      registers: options.registers,
    });
    this.bounds = options.bucketsSeconds;
    this.boundsMs = Float64Array.from(options.bucketsSeconds, (s) => s * 1000);
    this.counts = new Float64Array(options.bucketsSeconds.length + 1);
  }

  /** Counts one observation of `ms` milliseconds. */
  observeMs(ms: number): void {
    const bounds = this.boundsMs;
    let i = 0;
    while (i < bounds.length && ms > bounds[i]!) i++;
    this.counts[i]!++;
    this.sumMs += ms;
  }

  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    return this.getForPromString();
  }

  /** The registry's text export reads this (prom-client's Histogram defines it too). */
  async getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const name = (this as unknown as { name: string }).name;
    const values: MetricValueWithName<string>[] = [];
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i]!;
      values.push({ metricName: `${name}_bucket`, labels: { le: this.bounds[i]! }, value: cumulative });
    }
    cumulative += this.counts[this.bounds.length]!;
    values.push(
      { metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: cumulative },
      { metricName: `${name}_sum`, labels: {}, value: this.sumMs / 1000 },
      { metricName: `${name}_count`, labels: {}, value: cumulative },
    );
    const self = this as unknown as {
      help: string;
      type: MetricType;
      aggregator: Aggregator;
      collect: CollectFunction<unknown>;
    };
    return {
      name,
      help: self.help,
      type: self.type,
      values,
      aggregator: self.aggregator,
      collect: self.collect,
    };
  }

  /** Zeroes the counts (prom-client's reset, e.g. registry.resetMetrics()). */
  override reset(): void {
    // prom-client's constructor calls reset() before this class's fields exist.
    if (this.counts === undefined) return;
    this.counts.fill(0);
    this.sumMs = 0;
  }
}

/** A count kept outside prom-client for one label set of a counter: the hot path adds to `n` directly. */
export interface Tally {
  n: number;
}

const pendingCounts = new WeakMap<object, Map<string, Tally & { labels: Record<string, string> }>>();

/**
 * A tally for one label set of a counter, for counting on the redirect hot path: an increment is `tally.n++`
 * on an object fetched once, and the totals move into prom-client when the counter is read (its `collect`, see
 * `collectPending`). prom-client would otherwise sort, hash and validate the labels on every call, and even a
 * map lookup by a built key costs a string per request — measurable at tens of thousands of redirects a
 * second. Asking twice for the same labels returns the same tally.
 */
export function tally<L extends string>(counter: Counter<L>, labels: Record<L, string>): Tally {
  let counts = pendingCounts.get(counter);
  if (!counts) {
    counts = new Map();
    pendingCounts.set(counter, counts);
  }
  const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
  let entry = counts.get(key);
  if (!entry) {
    entry = { labels, n: 0 };
    counts.set(key, entry);
  }
  return entry;
}

/** A counter's `collect`: moves what its tallies counted into the counter before it is read. */
function collectPending(this: Counter<string>): void {
  const counts = pendingCounts.get(this);
  if (!counts) return;
  for (const entry of counts.values()) {
    if (entry.n > 0) {
      this.inc(entry.labels, entry.n);
      entry.n = 0;
    }
  }
}

/** What the sync queue's gauges show (read from Postgres at scrape time). */
export interface SyncQueueGaugeValues {
  depth: number;
  retrying: number;
  oldestAgeSeconds: number;
}

/**
 * Gauges whose values one read gives together (a Postgres query at scrape time): the read is shared by the
 * gauges of one scrape and reused for a second; a failed read leaves each gauge at its last value.
 */
function registerReadGauges<T>(
  registry: Registry,
  read: () => Promise<T>,
  gauges: readonly { name: string; help: string; pick: (values: T) => number }[],
): void {
  const current = scrapeRead(read);
  for (const { name, help, pick } of gauges) {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const values = await current();
        if (values) this.set(pick(values));
      },
    });
  }
}

/**
 * The sync queue's gauges (ADR 0024), read from Postgres when scraped (one read per scrape, shared by the
 * three): `lifeline_sync_queue_depth`, `lifeline_sync_queue_retrying`, `lifeline_sync_queue_oldest_age_seconds`.
 * A failed read leaves the last values (the scrape itself still answers).
 */
export function registerSyncQueueGauges(registry: Registry, read: () => Promise<SyncQueueGaugeValues>): void {
  registerReadGauges(registry, read, [
    {
      name: 'lifeline_sync_queue_depth',
      help: 'Links whose bulk change waits in the sync queue for its drainer (due or backing off).',
      pick: (v) => v.depth,
    },
    {
      name: 'lifeline_sync_queue_retrying',
      help: 'Links in the sync queue that failed at least one batch and wait for their next attempt.',
      pick: (v) => v.retrying,
    },
    {
      name: 'lifeline_sync_queue_oldest_age_seconds',
      help: 'How long the oldest link in the sync queue has waited for its replicas (0 when empty).',
      pick: (v) => v.oldestAgeSeconds,
    },
  ]);
}

/**
 * The expiry sweeper's backlog (ADR 0091), read from Postgres when scraped: `lifeline_expiry_overdue` (live active
 * links past their expires_at not expired yet) and `lifeline_expiry_overdue_oldest_seconds`. A failed read
 * leaves the last values.
 */
export function registerExpiryGauges(
  registry: Registry,
  read: () => Promise<{ due: number; oldestLateSeconds: number }>,
): void {
  registerReadGauges(registry, read, [
    {
      name: 'lifeline_expiry_overdue',
      help: 'Active links past their expiry that the expiry sweeper has not expired yet (readers already get the expired answer).',
      pick: (v) => v.due,
    },
    {
      name: 'lifeline_expiry_overdue_oldest_seconds',
      help: 'How long past its expiry the oldest active link not expired yet is (0 when none).',
      pick: (v) => v.oldestLateSeconds,
    },
  ]);
}

/**
 * `lifeline_wordpress_breaker_waiting`: breaker holds waiting for an admin's decision (ADR 0057), read from
 * Postgres when scraped. Above 0, a WordPress path wanted to retarget or take down more of a site's links than
 * its budget allows, and a run waits. A failed read leaves the last value.
 */
export function registerWordPressBreakerGauge(registry: Registry, read: () => Promise<number>): void {
  // Read at every scrape (one at a time): the count changes with an admin's decision.
  const current = scrapeRead(read, { reuseMs: 0 });
  new Gauge({
    name: 'lifeline_wordpress_breaker_waiting',
    help: 'Breaker holds of WordPress changes (retargets, gones beyond a site’s budget) waiting for an admin.',
    registers: [registry],
    async collect() {
      const value = await current();
      if (value !== null) this.set(value);
    },
  });
}

/** The black-box prober's own metrics (lib/prober), in the worker that runs it. */
export interface ProbeMetrics {
  /** lifeline_probe_total{result="ok|mismatch|error",domain}: one per code asked through a public short domain. */
  probes: Counter<'result' | 'domain'>;
  /** lifeline_probe_duration_seconds{domain}: request to answer's headers, as seen from outside the web process. */
  duration: Histogram<'domain'>;
  /** lifeline_probe_incidents_opened_total{domain}: incidents the prober opened. */
  incidentsOpened: Counter<'domain'>;
}

/**
 * Creates the prober's metrics in `registry` (the worker's; absent: a registry of their own, which tests read),
 * with all three results at 0 from the start.
 */
export function createProbeMetrics(
  registry: Registry = new Registry(),
  /** The short domains probed (host names), each with its series from the start. */
  domains: readonly string[] = [],
): ProbeMetrics {
  const probes = new Counter({
    name: 'lifeline_probe_total',
    help:
      'Probes of one code through a public short domain, by result and domain: ok (status and Location as ' +
      'Postgres says), mismatch (another answer), error (no answer, a timeout or a 5xx).',
    labelNames: ['result', 'domain'],
    registers: [registry],
  });
  for (const domain of domains)
    for (const result of ['ok', 'mismatch', 'error']) probes.inc({ result, domain }, 0);
  return {
    probes,
    duration: new Histogram({
      name: 'lifeline_probe_duration_seconds',
      help: 'How long a probe waited for the answer of a public short domain (headers), as a reader would.',
      labelNames: ['domain'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    incidentsOpened: new Counter({
      name: 'lifeline_probe_incidents_opened_total',
      help: 'Probe incidents opened, by short domain: a probe failed or answered other than Postgres says, none being open.',
      labelNames: ['domain'],
      registers: [registry],
    }),
  };
}

/**
 * `lifeline_probe_incidents_open`: probe incidents open now (0 or 1), read from Postgres when scraped, so every
 * worker shows the same number and a restart loses nothing. A failed read leaves the last value.
 */
export function registerProbeIncidentGauge(registry: Registry, read: () => Promise<number>): void {
  // Read at every scrape (one at a time): the prober opens and closes incidents as it goes.
  const current = scrapeRead(read, { reuseMs: 0 });
  new Gauge({
    name: 'lifeline_probe_incidents_open',
    help: 'Probe incidents open now: the public short domain answered wrongly or not at all, and has not passed since.',
    registers: [registry],
    async collect() {
      const value = await current();
      if (value !== null) this.set(value);
    },
  });
}

/** The latest finished failover drill towards one front (read from ops_runs). */
export interface DrillGaugeValue {
  to: string;
  /** The short domain drilled (its host name; ADR 0073). */
  domain: string;
  /** The latest finished drill passed. */
  passed: boolean;
  /** When the latest passing drill finished (seconds since the epoch), or null when none has. */
  lastSuccessSeconds: number | null;
}

/**
 * `lifeline_drill_last_result{to,domain}` (1 pass, 0 fail) and
 * `lifeline_drill_last_success_timestamp_seconds{to,domain}`, per front and short domain,
 * read from ops_runs when scraped. A front no drill has finished towards has no series, so "never drilled" is
 * not a failure; a Schedule that stopped shows as an old last-success time on the dashboard. A failed read leaves the last values.
 */
export function registerDrillGauges(registry: Registry, read: () => Promise<DrillGaugeValue[]>): void {
  const current = scrapeRead(read);
  new Gauge({
    name: 'lifeline_drill_last_result',
    help: 'The latest finished failover drill of a short domain towards a front: 1 passed, 0 failed.',
    labelNames: ['to', 'domain'],
    registers: [registry],
    async collect() {
      const values = await current();
      if (!values) return;
      this.reset();
      for (const v of values) this.set({ to: v.to, domain: v.domain }, v.passed ? 1 : 0);
    },
  });
  new Gauge({
    name: 'lifeline_drill_last_success_timestamp_seconds',
    help: 'When the latest passing failover drill of a short domain towards a front finished (Unix seconds).',
    labelNames: ['to', 'domain'],
    registers: [registry],
    async collect() {
      const values = await current();
      if (!values) return;
      this.reset();
      for (const v of values) {
        if (v.lastSuccessSeconds !== null) this.set({ to: v.to, domain: v.domain }, v.lastSuccessSeconds);
      }
    },
  });
}

/** lifeline_archive_saves_total: what became of each request to the Internet Archive (the worker counts it). */
export function createArchiveSaveCounter(registry: Registry): Counter<'outcome'> {
  return new Counter({
    name: 'lifeline_archive_saves_total',
    help:
      'Requests to the Internet Archive for a copy of a destination, by outcome: saved (Save Page Now captured ' +
      'it), found (an existing snapshot), missing (none), failed (the capture ended in error), rate_limited ' +
      '(429, retried after Retry-After), refused (keys or URL refused), unavailable (outage or timeout, retried).',
    labelNames: ['outcome'],
    registers: [registry],
  });
}

/** What the destination gauges show (read from Postgres at scrape time). */
export interface DestinationGaugeValues {
  byVerdict: Record<string, number>;
  oldestDueAgeSeconds: number;
}

/**
 * The destination checks' metrics (link rot; docs/OPERATIONS.md, "Destination checks"): the counter
 * `lifeline_destination_checks_total{outcome}` the worker's checks increment (the returned `countCheck`), and two
 * gauges read from Postgres when scraped: `lifeline_destination_verdicts{verdict}`,
 * `lifeline_destinations_dead_ratio` (dead among the checked: ok, suspect, dead, moved; 0 when none is checked;
 * the DeadDestinationsJump alert watches it) and `lifeline_destination_check_queue_age_seconds`. A failed read leaves the last values.
 */
export function registerDestinationMetrics(
  registry: Registry,
  read: () => Promise<DestinationGaugeValues>,
): { countCheck(outcome: string): void } {
  const current = scrapeRead(read);
  const checks = new Counter({
    name: 'lifeline_destination_checks_total',
    help: 'Destination checks by outcome (ok, moved, gone, soft-404, unreachable, parked; skipped: an excluded host).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  new Gauge({
    name: 'lifeline_destination_verdicts',
    help: 'Active links by the verdict on their destination (unchecked, ok, suspect, dead, moved).',
    labelNames: ['verdict'],
    registers: [registry],
    async collect() {
      const values = await current();
      if (!values) return;
      for (const [verdict, n] of Object.entries(values.byVerdict)) this.set({ verdict }, n);
    },
  });
  new Gauge({
    name: 'lifeline_destinations_dead_ratio',
    help: 'Share of checked destinations of active links whose verdict is dead (0 to 1).',
    registers: [registry],
    async collect() {
      const values = await current();
      if (!values) return;
      const v = (verdict: string) => values.byVerdict[verdict] ?? 0;
      const checked = v('ok') + v('suspect') + v('dead') + v('moved');
      this.set(checked === 0 ? 0 : v('dead') / checked);
    },
  });
  new Gauge({
    name: 'lifeline_destination_check_queue_age_seconds',
    help: 'How long the longest-waiting due destination check has been due (0: none is).',
    registers: [registry],
    async collect() {
      const values = await current();
      if (values) this.set(values.oldestDueAgeSeconds);
    },
  });
  return { countCheck: (outcome) => checks.inc({ outcome }) };
}

/** `lifeline_webhook_deliveries_total`: attempts of outgoing webhooks by outcome (ADR 0082). */
export function createWebhookDeliveryCounter(registry: Registry): Counter<'outcome'> {
  return new Counter({
    name: 'lifeline_webhook_deliveries_total',
    help:
      'Attempts to deliver outgoing webhooks, by outcome: delivered (2xx), retry (408, 429, 5xx, timeout or no ' +
      'connection; tried again later), failed (any other answer, or refused by the outgoing-request rule; not ' +
      'retried), dead (still failing when its time or attempts ran out).',
    labelNames: ['outcome'],
    registers: [registry],
  });
}

/** What the outgoing-webhook gauges show (read from Postgres at scrape time). */
export interface WebhookGaugeValues {
  pending: number;
  oldestPendingAgeSeconds: number;
  deadLetteringEndpoints: number;
}

/**
 * The outgoing-webhook outbox's gauges (ADR 0082), read from Postgres when scraped (kept 1 s): messages waiting,
 * the oldest one's age, and endpoints that dead-lettered a message in the last hour (the WebhookDeadLettering
 * alert). A failed read leaves the last values.
 */
export function registerWebhookGauges(registry: Registry, read: () => Promise<WebhookGaugeValues>): void {
  registerReadGauges(registry, read, [
    {
      name: 'lifeline_webhook_pending',
      help: 'Outgoing webhook messages of enabled endpoints waiting to be delivered (due or backing off).',
      pick: (v) => v.pending,
    },
    {
      name: 'lifeline_webhook_oldest_pending_age_seconds',
      help: 'How long the oldest waiting outgoing webhook message has waited since its event (0 when none waits).',
      pick: (v) => v.oldestPendingAgeSeconds,
    },
    {
      name: 'lifeline_webhook_dead_lettering_endpoints',
      help: 'Webhook endpoints with a message that went dead (gave up after its retries) in the last hour.',
      pick: (v) => v.deadLetteringEndpoints,
    },
  ]);
}

/**
 * The resolver's LRU, read when scraped (nothing on the redirect path): the estimated bytes its records hold
 * (`lifeline_resolver_cache_bytes`, of `lifeline_resolver_cache_max_bytes`, RESOLVER_CACHE_MAX_BYTES) and the
 * entries (`lifeline_resolver_cache_entries`, records and "no such code" answers).
 */
/**
 * The resolver's breakers, 1 while open (lib/shared/breaker.ts): `postgres` open means lookups the caches cannot
 * answer get 503 at once; `serving_store` open means LRU misses go straight to Postgres.
 */
export function registerLookupBreakerGauge(
  registry: Registry,
  read: () => { postgres: boolean; serving_store?: boolean },
): void {
  if (registry.getSingleMetric('lifeline_lookup_breaker_open')) return;
  new Gauge({
    name: 'lifeline_lookup_breaker_open',
    help:
      "1 while the resolver's breaker for a layer is open (postgres: lookups the caches cannot answer get 503 at " +
      'once; serving_store: LRU misses go straight to Postgres) until its background probe is answered.',
    labelNames: ['layer'],
    registers: [registry],
    collect() {
      const open = read();
      this.set({ layer: 'postgres' }, open.postgres ? 1 : 0);
      if (open.serving_store !== undefined) this.set({ layer: 'serving_store' }, open.serving_store ? 1 : 0);
    },
  });
}

export function registerResolverCacheGauges(
  registry: Registry,
  read: { bytes: () => number; entries: () => number; maxBytes: number },
): void {
  new Gauge({
    name: 'lifeline_resolver_cache_bytes',
    help: "Estimated heap bytes of the records in this process's LRUs (all short domains; 0 with no byte bound).",
    registers: [registry],
    collect() {
      this.set(read.bytes());
    },
  });
  new Gauge({
    name: 'lifeline_resolver_cache_max_bytes',
    help: 'RESOLVER_CACHE_MAX_BYTES: the estimated bytes the LRUs may hold together (0: bounded by entries only).',
    registers: [registry],
  }).set(read.maxBytes);
  new Gauge({
    name: 'lifeline_resolver_cache_entries',
    help: 'Entries in this process\'s LRUs: records and remembered "no such code" answers, all short domains.',
    registers: [registry],
    collect() {
      this.set(read.entries());
    },
  });
}
