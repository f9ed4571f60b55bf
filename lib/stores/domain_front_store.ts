import type { Db } from './sql.ts';

/** A short domain's row of short_domain_fronts (migration 0122): who answers it, since when, which run. */
export interface DomainFrontRow {
  /** The stored domain: '' for the default short domain, the host name for another. */
  domain: string;
  active: 'bitly' | 'inhouse';
  since: Date | null;
  workflowId: string | null;
}

/** One domain's row, or null (never switched: in-house). */
export async function getDomainFrontRow(db: Db, domain: string): Promise<DomainFrontRow | null> {
  const rows = await db<DomainFrontRow[]>`
    SELECT domain, active, since, workflow_id AS "workflowId" FROM short_domain_fronts WHERE domain = ${domain}`;
  return rows[0] ?? null;
}

/** Every domain's row (one per domain ever switched), by stored domain. */
export async function listDomainFrontRows(db: Db): Promise<DomainFrontRow[]> {
  return db<DomainFrontRow[]>`
    SELECT domain, active, since, workflow_id AS "workflowId" FROM short_domain_fronts ORDER BY domain`;
}

/** Sets one domain's front. */
export async function upsertDomainFrontRow(db: Db, row: DomainFrontRow): Promise<void> {
  await db`
    INSERT INTO short_domain_fronts (domain, active, since, workflow_id)
    VALUES (${row.domain}, ${row.active}, ${row.since}, ${row.workflowId})
    ON CONFLICT (domain) DO UPDATE SET active = EXCLUDED.active, since = EXCLUDED.since,
      workflow_id = EXCLUDED.workflow_id, updated_at = now()`;
}
