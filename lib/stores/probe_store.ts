// The black-box prober's SQL (lib/prober): the rotating sample of codes, the canary link, and incidents
// (migrations/0094_probe_incidents.sql).

import type { LinkRow } from './link_rows.ts';
import { LINK_COLUMNS, QUALIFIED_LINK_COLUMNS } from './link_store.ts';
import type { Db } from './sql.ts';

/** The owner of the canary link: not a user (no one signs in as it); the editors' list leaves its links out. */
export const PROBE_CANARY_OWNER = 'lifeline:prober';

/**
 * Up to `limit` links after `cursor` in code order that a reader can be sent to or refused by a settled answer:
 * not deleted, not pending (a publish in flight), and unchanged since `settledBefore` (a change may take the
 * documented staleness bound to reach every cache, so a younger one could answer its old self by design).
 */
export async function listProbeSample(
  db: Db,
  options: { cursor: string; limit: number; settledBefore: Date; onBitly?: boolean; domain?: string },
): Promise<LinkRow[]> {
  // onBitly (Bitly fronts the short domain): only active links Bitly holds, the only ones it can answer as
  // Postgres says (it knows nothing of gone, expired or blocked answers, nor of links kept in-house only).
  const bitly = options.onBitly
    ? db`AND l.status = 'active' AND EXISTS (SELECT 1 FROM vendor_links AS v
          WHERE v.code = l.code AND v.vendor = 'bitly' AND v.state = 'synced')`
    : db``;
  return db<LinkRow[]>`
    SELECT ${db.unsafe(QUALIFIED_LINK_COLUMNS)} FROM links AS l
    -- One short domain's links (default: the default's): each domain is asked on its own base (ADR 0073).
    WHERE l.code > ${options.cursor} AND l.domain = ${options.domain ?? ''} AND l.deleted_at IS NULL
      AND l.status <> 'pending'
      AND l.updated_at < ${options.settledBefore} ${bitly}
    ORDER BY l.code LIMIT ${options.limit}`;
}

/** True when Bitly holds `code` (the canary while Bitly fronts: not before reconciliation put it there). */
export async function isSyncedOnBitly(db: Db, code: string): Promise<boolean> {
  const rows = await db`
    SELECT 1 FROM vendor_links WHERE code = ${code} AND vendor = 'bitly' AND state = 'synced'`;
  return rows.length > 0;
}

/** The link rows of these codes as they are now (deleted ones included). */
export async function getProbeRows(db: Db, codes: string[]): Promise<Map<string, LinkRow>> {
  if (codes.length === 0) return new Map();
  const rows = await db<LinkRow[]>`
    SELECT ${db.unsafe(LINK_COLUMNS)} FROM links WHERE code = ANY(${db.array(codes)}::text[])`;
  return new Map(rows.map((r) => [r.code, r]));
}

/**
 * Creates the canary link once (active, clean; a no-op when the code exists) and returns the row for its code
 * now, whoever owns it, or null.
 */
export async function insertCanaryLink(
  db: Db,
  canary: { code: string; url: string; title: string; tag: string; domain?: string },
): Promise<{ row: LinkRow | null; created: boolean }> {
  // code is the canary's key on its domain (`{domain}/lifeline-canary` on another short domain).
  const created = await db<{ code: string }[]>`
    INSERT INTO links (code, domain, target_url, status, safety, origin, owner, title, tags)
    VALUES (${canary.code}, ${canary.domain ?? ''}, ${canary.url}, 'active', 'clean', 'api', ${PROBE_CANARY_OWNER}, ${canary.title},
      ${db.array([canary.tag])}::text[])
    ON CONFLICT (code) DO NOTHING RETURNING code`;
  const rows = await db<LinkRow[]>`SELECT ${db.unsafe(LINK_COLUMNS)} FROM links WHERE code = ${canary.code}`;
  return { row: rows[0] ?? null, created: created.length > 0 };
}

/** Points our own canary at `url` (when the setting changed); never touches a code someone else owns. */
export async function retargetCanaryLink(db: Db, code: string, url: string): Promise<boolean> {
  const rows = await db`
    UPDATE links SET target_url = ${url}, updated_at = now(), version = version + 1
    WHERE code = ${code} AND owner = ${PROBE_CANARY_OWNER} AND target_url <> ${url} RETURNING code`;
  return rows.length > 0;
}

/** One failed probe as an incident keeps it (never a body). */
export interface ProbeFailure {
  code: string;
  result: 'mismatch' | 'error';
  expected: string;
  actual: string;
}

export interface ProbeIncidentRow {
  id: string;
  /** The short domain probed ('' for the default). */
  domain: string;
  openedAt: Date;
  closedAt: Date | null;
  lastFailedAt: Date;
  mismatches: number;
  errors: number;
  firstFailure: ProbeFailure;
  lastFailure: ProbeFailure;
}

const INCIDENT_COLUMNS = `
  id::text AS id, domain, opened_at AS "openedAt", closed_at AS "closedAt", last_failed_at AS "lastFailedAt",
  mismatches, errors, first_failure AS "firstFailure", last_failure AS "lastFailure"`;

/**
 * Adds a probe's failures to the open incident, or opens one with them. Returns the incident and whether this
 * call opened it. Two probes racing open one incident (the partial unique index); the loser joins it.
 */
export async function recordProbeFailures(
  db: Db,
  failures: { mismatches: number; errors: number; first: ProbeFailure; last: ProbeFailure; domain?: string },
): Promise<{ incident: ProbeIncidentRow; opened: boolean }> {
  const domain = failures.domain ?? '';
  for (;;) {
    const extended = await db<ProbeIncidentRow[]>`
      UPDATE probe_incidents SET mismatches = mismatches + ${failures.mismatches},
        errors = errors + ${failures.errors}, last_failed_at = now(), last_failure = ${db.json(failures.last as never)}
      WHERE closed_at IS NULL AND domain = ${domain} RETURNING ${db.unsafe(INCIDENT_COLUMNS)}`;
    if (extended[0]) return { incident: extended[0], opened: false };
    const opened = await db<ProbeIncidentRow[]>`
      INSERT INTO probe_incidents (domain, mismatches, errors, first_failure, last_failure)
      VALUES (${domain}, ${failures.mismatches}, ${failures.errors}, ${db.json(failures.first as never)},
        ${db.json(failures.last as never)})
      ON CONFLICT DO NOTHING RETURNING ${db.unsafe(INCIDENT_COLUMNS)}`;
    if (opened[0]) return { incident: opened[0], opened: true };
  }
}

/** Closes a short domain's open incident (default: the default domain's), if any; returns it. */
export async function closeProbeIncident(db: Db, domain = ''): Promise<ProbeIncidentRow | null> {
  const rows = await db<ProbeIncidentRow[]>`
    UPDATE probe_incidents SET closed_at = now() WHERE closed_at IS NULL AND domain = ${domain}
    RETURNING ${db.unsafe(INCIDENT_COLUMNS)}`;
  return rows[0] ?? null;
}

/** Open incidents: at most one per short domain (the lifeline_probe_incidents_open gauge). */
export async function countOpenProbeIncidents(db: Db): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM probe_incidents WHERE closed_at IS NULL`;
  return row?.n ?? 0;
}

/** The latest incidents, newest first (the operations page). */
export async function listProbeIncidents(db: Db, limit: number): Promise<ProbeIncidentRow[]> {
  return db<ProbeIncidentRow[]>`
    SELECT ${db.unsafe(INCIDENT_COLUMNS)} FROM probe_incidents ORDER BY opened_at DESC, id DESC LIMIT ${limit}`;
}
