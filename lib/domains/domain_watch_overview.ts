// The stored facts as the operations page and /metrics show them (read from Postgres, so the web process sees
// what the worker read).
import { type DomainFactRow, listDomainFacts } from '../stores/domain_watch_store.ts';
import type { Db } from '../stores/sql.ts';
import { DOMAIN_FACTS, daysLeft } from './domain_facts.ts';

export interface DomainFactView extends DomainFactRow {
  /** Days from now to expiresAt (fractional; negative once past); null without an expiry. */
  daysLeft: number | null;
}

/** Every stored fact, by name then in DOMAIN_FACTS order, with the days left counted from `nowMs`. */
export async function getDomainWatchOverview(db: Db, nowMs = Date.now()): Promise<DomainFactView[]> {
  const rows = await listDomainFacts(db);
  const order = (f: string) => DOMAIN_FACTS.indexOf(f as never);
  return rows
    .map((r) => ({ ...r, daysLeft: r.expiresAt ? daysLeft(r.expiresAt, nowMs) : null }))
    .sort((a, b) =>
      a.subject === b.subject ? order(a.fact) - order(b.fact) : a.subject < b.subject ? -1 : 1,
    );
}
