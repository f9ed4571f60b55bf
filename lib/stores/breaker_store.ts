// The breaker on mass change by WordPress (lib/publishing/mass_change_breaker.ts, ADR 0057): what a site's
// WordPress paths changed in the last hour, and the changes held for an admin's decision.
import type { Db } from './sql.ts';

/** A site's links that are not deleted: what the breaker's share is taken of. */
export async function countSiteLinks(db: Db, site: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM links WHERE site = ${site} AND deleted_at IS NULL`;
  return row?.n ?? 0;
}

/**
 * Holds the site's breaker budget until the transaction ends, so concurrent post events (one workflow per post)
 * read and spend it one at a time rather than each seeing the whole budget left.
 */
export async function lockSiteBudget(tx: Db, site: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`breaker|${site}`}, 0))`;
}

/** Retargets and gones a site's WordPress paths applied in the last hour. */
export async function sumSpentLastHour(db: Db, site: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT COALESCE(sum(changes), 0)::int AS n FROM wordpress_breaker_spend
    WHERE site = ${site} AND minute > now() - interval '1 hour'`;
  return row?.n ?? 0;
}

export async function insertSpend(db: Db, site: string, changes: number): Promise<void> {
  if (changes <= 0) return;
  await db`
    INSERT INTO wordpress_breaker_spend (site, minute, changes)
    VALUES (${site}, date_trunc('minute', now()), ${changes})
    ON CONFLICT (site, minute) DO UPDATE SET changes = wordpress_breaker_spend.changes + EXCLUDED.changes`;
  await db`DELETE FROM wordpress_breaker_spend WHERE site = ${site} AND minute < now() - interval '1 day'`;
}

export interface HoldRow {
  id: number;
  site: string;
  source: 'reconcile' | 'events';
  runId: string | null;
  workflowId: string | null;
  status: 'waiting' | 'applied' | 'discarded';
  budget: number;
  siteLinks: number;
  decidedBy: string | null;
  decidedAt: Date | null;
  createdAt: Date;
}

const HOLD_COLUMNS = `id::int AS id, site, source, run_id AS "runId", workflow_id AS "workflowId", status, budget,
  site_links AS "siteLinks", decided_by AS "decidedBy", decided_at AS "decidedAt", created_at AS "createdAt"`;

/** The reconciliation run's hold (created on first need), or the site's waiting hold of post events. */
export async function upsertHold(
  db: Db,
  hold: {
    site: string;
    source: 'reconcile' | 'events';
    runId: string | null;
    workflowId: string | null;
    budget: number;
    siteLinks: number;
  },
): Promise<HoldRow> {
  const found =
    hold.source === 'reconcile'
      ? await db<HoldRow[]>`SELECT ${db.unsafe(HOLD_COLUMNS)} FROM wordpress_breaker_holds
                            WHERE source = 'reconcile' AND run_id = ${hold.runId} AND site = ${hold.site}`
      : await db<HoldRow[]>`SELECT ${db.unsafe(HOLD_COLUMNS)} FROM wordpress_breaker_holds
                            WHERE source = 'events' AND site = ${hold.site} AND status = 'waiting'`;
  if (found[0]) return found[0];
  const [row] = await db<HoldRow[]>`
    INSERT INTO wordpress_breaker_holds (site, source, run_id, workflow_id, budget, site_links)
    VALUES (${hold.site}, ${hold.source}, ${hold.runId}, ${hold.workflowId}, ${hold.budget}, ${hold.siteLinks})
    RETURNING ${db.unsafe(HOLD_COLUMNS)}`;
  return row!;
}

export interface HeldChangeRow {
  code: string;
  change: 'retarget' | 'gone';
  postId: number | null;
  beforeUrl: string;
  afterUrl: string | null;
  beforeStatus: string;
  expectedVersion: number;
  state?: 'held' | 'applied' | 'skipped' | 'discarded';
}

export async function insertHeldChanges(db: Db, holdId: number, changes: HeldChangeRow[]): Promise<void> {
  if (changes.length === 0) return;
  const col = (pick: (c: HeldChangeRow) => string | number | null) =>
    db.array(changes.map((c) => (pick(c) === null ? '' : String(pick(c)))));
  await db`
    INSERT INTO wordpress_breaker_changes (hold_id, code, change, post_id, before_url, after_url, before_status,
                                           expected_version)
    SELECT ${holdId}, code, change, NULLIF(post_id, '')::bigint, before_url, NULLIF(after_url, ''), before_status,
           expected_version::int
    FROM unnest(${col((c) => c.code)}::text[], ${col((c) => c.change)}::text[], ${col((c) => c.postId)}::text[],
                ${col((c) => c.beforeUrl)}::text[], ${col((c) => c.afterUrl)}::text[],
                ${col((c) => c.beforeStatus)}::text[], ${col((c) => c.expectedVersion)}::text[])
      AS t(code, change, post_id, before_url, after_url, before_status, expected_version)
    ON CONFLICT (hold_id, code) DO UPDATE SET change = EXCLUDED.change, after_url = EXCLUDED.after_url,
      expected_version = EXCLUDED.expected_version, before_url = EXCLUDED.before_url,
      before_status = EXCLUDED.before_status
    WHERE wordpress_breaker_changes.state = 'held'`;
}

export async function getHold(db: Db, id: number): Promise<HoldRow | null> {
  const rows = await db<
    HoldRow[]
  >`SELECT ${db.unsafe(HOLD_COLUMNS)} FROM wordpress_breaker_holds WHERE id = ${id}`;
  return rows[0] ?? null;
}

export async function getHoldForUpdate(db: Db, id: number): Promise<HoldRow | null> {
  const rows = await db<HoldRow[]>`
    SELECT ${db.unsafe(HOLD_COLUMNS)} FROM wordpress_breaker_holds WHERE id = ${id} FOR UPDATE`;
  return rows[0] ?? null;
}

export async function listHolds(
  db: Db,
  options: { status?: string | undefined; limit: number },
): Promise<HoldRow[]> {
  return db<HoldRow[]>`
    SELECT ${db.unsafe(HOLD_COLUMNS)} FROM wordpress_breaker_holds
    WHERE (${options.status ?? null}::text IS NULL OR status = ${options.status ?? null})
    ORDER BY id DESC LIMIT ${options.limit}`;
}

/** Held changes by kind and state: { retarget: {held: n, ...}, gone: {...} }. */
export async function countHeldChanges(
  db: Db,
  holdId: number,
): Promise<Record<string, Record<string, number>>> {
  const rows = await db<{ change: string; state: string; n: number }[]>`
    SELECT change, state, count(*)::int AS n FROM wordpress_breaker_changes WHERE hold_id = ${holdId}
    GROUP BY change, state`;
  const out: Record<string, Record<string, number>> = {};
  for (const r of rows) out[r.change] = { ...out[r.change], [r.state]: r.n };
  return out;
}

export async function listHeldChanges(
  db: Db,
  holdId: number,
  options: { state?: string; limit: number; afterCode?: string },
): Promise<HeldChangeRow[]> {
  return db<HeldChangeRow[]>`
    SELECT code, change, post_id::float8 AS "postId", before_url AS "beforeUrl", after_url AS "afterUrl",
           before_status AS "beforeStatus", expected_version AS "expectedVersion", state
    FROM wordpress_breaker_changes
    WHERE hold_id = ${holdId} AND (${options.state ?? null}::text IS NULL OR state = ${options.state ?? null})
      AND code > ${options.afterCode ?? ''}
    ORDER BY code LIMIT ${options.limit}`;
}

export async function updateHeldChangesState(
  db: Db,
  holdId: number,
  codes: string[],
  state: 'applied' | 'skipped' | 'discarded',
): Promise<void> {
  if (codes.length === 0) return;
  await db`
    UPDATE wordpress_breaker_changes SET state = ${state}
    WHERE hold_id = ${holdId} AND code = ANY(${db.array(codes)}::text[]) AND state = 'held'`;
}

export async function updateHoldDecided(
  db: Db,
  id: number,
  status: 'applied' | 'discarded',
  by: string,
): Promise<void> {
  await db`
    UPDATE wordpress_breaker_holds SET status = ${status}, decided_by = ${by}, decided_at = now(), updated_at = now()
    WHERE id = ${id} AND status = 'waiting'`;
  if (status === 'discarded') {
    await db`UPDATE wordpress_breaker_changes SET state = 'discarded' WHERE hold_id = ${id} AND state = 'held'`;
  }
}

/** Holds waiting for a decision (the breaker gauge). */
export async function countWaitingHolds(db: Db): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM wordpress_breaker_holds WHERE status = 'waiting'`;
  return row?.n ?? 0;
}
