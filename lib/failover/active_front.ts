import { DEFAULT_DOMAIN } from '../shared/link_key.ts';
import { insertAuditEntry } from '../stores/audit_store.ts';
import {
  type DomainFrontRow,
  getDomainFrontRow,
  listDomainFrontRows,
  upsertDomainFrontRow,
} from '../stores/domain_front_store.ts';
import type { Db, Sql } from '../stores/sql.ts';

export const FRONTS = ['bitly', 'inhouse'] as const;
export type Front = (typeof FRONTS)[number];

/** Who answers a short domain, since when, and which run switched it. */
export interface ActiveFront {
  active: Front;
  since: string | null;
  workflowId?: string;
}

function toActiveFront(row: DomainFrontRow | null): ActiveFront {
  return {
    active: row?.active === 'bitly' ? 'bitly' : 'inhouse',
    since: row?.since ? row.since.toISOString() : null,
    ...(row?.workflowId ? { workflowId: row.workflowId } : {}),
  };
}

/**
 * The active front of one short domain (its stored name: DEFAULT_DOMAIN, '', for the default), in-house until a
 * failback says otherwise. Each domain has its own (short_domain_fronts, ADR 0073).
 */
export async function getActiveFront(db: Db, domain: string = DEFAULT_DOMAIN): Promise<ActiveFront> {
  return toActiveFront(await getDomainFrontRow(db, domain));
}

/** The active front of each stored domain given (one query), in the order given. */
export async function getActiveFronts(
  db: Db,
  domains: readonly string[],
): Promise<{ domain: string; front: ActiveFront }[]> {
  const rows = new Map((await listDomainFrontRows(db)).map((r) => [r.domain, r]));
  return domains.map((domain) => ({ domain, front: toActiveFront(rows.get(domain) ?? null) }));
}

/**
 * Sets a domain's active front directly, without a run or an audit entry: seeding (tests, benchmarks) and
 * restores only. Operators change fronts through the front change workflow.
 */
export async function setActiveFront(
  db: Db,
  front: { active: Front; since?: string | null; workflowId?: string | null },
  domain: string = DEFAULT_DOMAIN,
): Promise<void> {
  await upsertDomainFrontRow(db, {
    domain,
    active: front.active,
    since: front.since ? new Date(front.since) : null,
    workflowId: front.workflowId ?? null,
  });
}

/**
 * Switches one domain's active front, with an audit entry, once: a retry of the same run finds its own switch
 * done and changes nothing. Returns the front as it stands afterwards and whether this call switched it.
 */
export async function switchActiveFront(
  sql: Sql,
  options: { to: Front; workflowId: string; domain?: string },
): Promise<{ front: ActiveFront; switched: boolean }> {
  const domain = options.domain ?? DEFAULT_DOMAIN;
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`active_front:${domain}`}, 0))`;
    const before = await getActiveFront(tx, domain);
    if (before.workflowId === options.workflowId && before.active === options.to) {
      return { front: before, switched: false };
    }
    const front: ActiveFront = {
      active: options.to,
      since: new Date().toISOString(),
      workflowId: options.workflowId,
    };
    await setActiveFront(tx, front, domain);
    await insertAuditEntry(tx, {
      code: null,
      actor: `system:${options.workflowId}`,
      action: 'front.switched',
      before: domain === DEFAULT_DOMAIN ? before : { ...before, domain },
      after: domain === DEFAULT_DOMAIN ? front : { ...front, domain },
    });
    return { front, switched: true };
  });
}
