// The domain watch's gauges, read from Postgres when scraped, in the web process and the worker alike (both show
// what the worker last read). Names are fixed: ops/prometheus/lifeline.rules.yml and the Grafana row use them.
import { Gauge, type Registry } from 'prom-client';
import { scrapeRead } from '../shared/scrape_read.ts';
import type { DomainFactView } from './domain_watch_overview.ts';

/**
 * Registers `lifeline_domain_registration_days_left{domain}`, `lifeline_tls_certificate_days_left{host}`,
 * `lifeline_domain_watch_ok{domain,fact}` (1 fine, 0 not; absent while a fact is unknown) and
 * `lifeline_domain_watch_read_timestamp_seconds{domain,fact}` (the last read that succeeded). One read per scrape
 * serves the four; a failed read leaves the last values. Registering twice on one registry is a no-op.
 */
export function registerDomainWatchGauges(registry: Registry, read: () => Promise<DomainFactView[]>): void {
  if (registry.getSingleMetric('lifeline_domain_watch_ok')) return;
  const current = scrapeRead(read);
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: L[],
    fill: (g: Gauge<L>, rows: DomainFactView[]) => void,
  ) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      // Several web processes (WEB_CONCURRENCY) each read the same rows: their values are one value, not a sum.
      aggregator: 'first',
      async collect() {
        const rows = await current();
        if (!rows) return;
        this.reset();
        fill(this, rows);
      },
    });
  gauge(
    'lifeline_domain_registration_days_left',
    'Days until the registration of a watched domain expires, as its registry shows it over RDAP (negative: past).',
    ['domain'],
    (g, rows) => {
      for (const r of rows)
        if (r.fact === 'registration' && r.daysLeft !== null) g.set({ domain: r.subject }, r.daysLeft);
    },
  );
  gauge(
    'lifeline_tls_certificate_days_left',
    'Days until the certificate a watched host serves expires (negative: expired).',
    ['host'],
    (g, rows) => {
      for (const r of rows)
        if (r.fact === 'certificate' && r.daysLeft !== null) g.set({ host: r.subject }, r.daysLeft);
    },
  );
  gauge(
    'lifeline_domain_watch_ok',
    'Whether a watched fact is fine (1) or needs someone (0): registration, certificate, reputation, dnssec, lock.',
    ['domain', 'fact'],
    (g, rows) => {
      for (const r of rows) if (r.ok !== null) g.set({ domain: r.subject, fact: r.fact }, r.ok ? 1 : 0);
    },
  );
  gauge(
    'lifeline_domain_watch_read_timestamp_seconds',
    'When the domain watch last read a fact successfully (Unix seconds).',
    ['domain', 'fact'],
    (g, rows) => {
      for (const r of rows)
        if (r.readAt) g.set({ domain: r.subject, fact: r.fact }, Math.floor(r.readAt.getTime() / 1000));
    },
  );
}
