// The promises Lifeline makes about its copies, as gauges the worker's /metrics reads from Postgres when
// scraped: Bitly collisions, reconciliation drift per leg, the age of the last escrow export and static snapshot.
// Each reader is one bounded query (an index, a LIMIT); one read serves every gauge of its group and is kept for
// PROMISE_GAUGE_CACHE_MS, so a burst of scrapes (several Prometheus servers, a dashboard refresh) costs one query.
// Never on the redirect path: only the worker registers them (workers/main.ts). A failed read leaves the last
// values, and the scrape still answers.
import { Gauge, type Registry } from 'prom-client';
import { scrapeRead } from './scrape_read.ts';

/** How long one read of Postgres answers scrapes. */
export const PROMISE_GAUGE_CACHE_MS = 5_000;

/** Shared codes a vendor will not hold (vendor copy in state `collision`), per vendor. */
export type VendorCollisionCounts = Record<string, number>;

/**
 * `lifeline_vendor_collisions{vendor}`: links whose shared code a vendor refused or answered with another
 * back-half (ADR 0008), recorded and waiting for a human. Above 0, that code does not work on the vendor.
 */
export function registerVendorCollisionGauge(
  registry: Registry,
  read: () => Promise<VendorCollisionCounts>,
): void {
  const current = scrapeRead(read, { reuseMs: PROMISE_GAUGE_CACHE_MS });
  new Gauge({
    name: 'lifeline_vendor_collisions',
    help:
      'Links whose shared code a vendor will not hold (refused, or answered with another back-half; ADR 0008), ' +
      'waiting for a human. Counted up to 10000.',
    labelNames: ['vendor'],
    registers: [registry],
    async collect() {
      const counts = await current();
      if (!counts) return;
      for (const [vendor, n] of Object.entries(counts)) this.set({ vendor }, n);
    },
  });
}

/** What the latest completed reconciliation found, per leg. */
export interface ReconcileDriftValues {
  /** Drift found, by leg and kind (missing, stale, extra, collision, stray, …); a leg not run is absent. */
  found: { leg: string; drift: string; count: number; domain?: string }[];
  /** Drift left unrepaired by that run (a check-only run repairs nothing), per leg that ran. */
  unrepaired: { leg: string; count: number }[];
  /** When that run finished (seconds since the epoch); null: no completed run yet (drift has no series). */
  finishedAtSeconds: number | null;
}

/**
 * The latest completed reconciliation's findings (ADR 0004): `lifeline_reconcile_drift{leg, drift}`,
 * `lifeline_reconcile_drift_unrepaired{leg}` and `lifeline_reconcile_last_run_timestamp_seconds`. Propagation
 * should leave nothing for reconciliation to find; drift on a leg means a path to that copy missed changes.
 */
export function registerReconcileDriftGauges(
  registry: Registry,
  read: () => Promise<ReconcileDriftValues>,
): void {
  const current = scrapeRead(read, { reuseMs: PROMISE_GAUGE_CACHE_MS });
  new Gauge({
    name: 'lifeline_reconcile_drift',
    help:
      'Drift the latest completed reconciliation found, by leg (bitly, serving, expiry, wordpress) and kind ' +
      '(missing, stale, extra, collision, stray, unimportable, gone); repaired or not. The bitly leg is by ' +
      'short domain (domain: its host name).',
    labelNames: ['leg', 'drift', 'domain'],
    registers: [registry],
    async collect() {
      const values = await current();
      if (!values) return;
      this.reset();
      for (const { leg, drift, count, domain } of values.found)
        this.set(domain === undefined ? { leg, drift } : { leg, drift, domain }, count);
    },
  });
  new Gauge({
    name: 'lifeline_reconcile_drift_unrepaired',
    help: 'Drift the latest completed reconciliation found and left as it was, by leg (a check-only run repairs nothing).',
    labelNames: ['leg'],
    registers: [registry],
    async collect() {
      const values = await current();
      if (!values) return;
      this.reset();
      for (const { leg, count } of values.unrepaired) this.set({ leg }, count);
    },
  });
  new Gauge({
    name: 'lifeline_reconcile_last_run_timestamp_seconds',
    help:
      'When the latest completed reconciliation (every leg) finished, in seconds since the epoch; 0: none in the ' +
      'last 30 days.',
    registers: [registry],
    async collect() {
      const values = await current();
      if (values) this.set(values.finishedAtSeconds ?? 0);
    },
  });
}

/** The last successful run of a scheduled copy (escrow export, static snapshot) and its Schedule's interval. */
export interface ScheduledCopyAge {
  kind: string;
  /**
   * Seconds since the last successful run; while none has succeeded, since the first attempt. Null: never
   * attempted (no series: a Schedule that never ran yet is not late).
   */
  ageSeconds: number | null;
  /** The Schedule's interval in seconds; null: no Schedule (off). */
  intervalSeconds: number | null;
}

/**
 * `lifeline_escrow_last_success_age_seconds{kind}` and `lifeline_escrow_interval_seconds{kind}` (kind `export`
 * or `snapshot`, ADR 0020): the alert fires when the age passes twice the interval.
 */
export function registerEscrowAgeGauges(registry: Registry, read: () => Promise<ScheduledCopyAge[]>): void {
  const current = scrapeRead(read, { reuseMs: PROMISE_GAUGE_CACHE_MS });
  new Gauge({
    name: 'lifeline_escrow_last_success_age_seconds',
    help:
      'Seconds since the last successful escrow export or static snapshot, by kind (export, snapshot); while ' +
      'none has succeeded, since the first attempt.',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      const ages = await current();
      if (!ages) return;
      this.reset();
      for (const { kind, ageSeconds } of ages) if (ageSeconds !== null) this.set({ kind }, ageSeconds);
    },
  });
  new Gauge({
    name: 'lifeline_escrow_interval_seconds',
    help: 'The Schedule interval of escrow exports and static snapshots, by kind (ESCROW_INTERVAL, SNAPSHOT_INTERVAL); absent when off.',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      const ages = await current();
      if (!ages) return;
      this.reset();
      for (const { kind, intervalSeconds } of ages)
        if (intervalSeconds !== null) this.set({ kind }, intervalSeconds);
    },
  });
}
