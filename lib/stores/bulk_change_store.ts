// bulk_changes and bulk_change_links (migrations/0120_bulk_link_changes.sql, ADR 0086): an editor's change of
// many links at once, its fixed selection and what became of each link.
import { type LinkListFilter, linkFilterConditions } from './link_list_store.ts';
import type { LinkRow } from './link_rows.ts';
import { QUALIFIED_LINK_COLUMNS } from './link_store.ts';
import type { Db } from './sql.ts';

export const BULK_ACTIONS = ['tag_add', 'tag_remove', 'expire', 'block', 'delete'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];
export type BulkChangeStatus = 'selecting' | 'running' | 'finished' | 'failed';

/** Which links a run takes: the codes ticked, or every link a list filter matches when the run starts. */
export type BulkSelection = { codes: string[] } | { filter: LinkListFilter };

export interface BulkChangeRow {
  id: string;
  action: BulkAction;
  params: { tag?: string; expiresAt?: string | null };
  selection: BulkSelection;
  reason: string | null;
  status: BulkChangeStatus;
  total: number;
  applied: number;
  skipped: number;
  requestedBy: string;
  mayManagePostLinks: boolean;
  workflowId: string;
  createdAt: Date;
  finishedAt: Date | null;
  updatedAt: Date;
}

const COLUMNS = `id, action, params, selection, reason, status, total, applied, skipped,
  requested_by AS "requestedBy", may_manage_post_links AS "mayManagePostLinks", workflow_id AS "workflowId",
  created_at AS "createdAt", finished_at AS "finishedAt", updated_at AS "updatedAt"`;

export async function insertBulkChange(
  db: Db,
  run: Pick<
    BulkChangeRow,
    'id' | 'action' | 'params' | 'selection' | 'reason' | 'requestedBy' | 'mayManagePostLinks' | 'workflowId'
  >,
): Promise<BulkChangeRow> {
  const [row] = await db<BulkChangeRow[]>`
    INSERT INTO bulk_changes (id, action, params, selection, reason, requested_by, may_manage_post_links, workflow_id)
    VALUES (${run.id}, ${run.action}, ${db.json(run.params as never)}, ${db.json(run.selection as never)},
            ${run.reason}, ${run.requestedBy}, ${run.mayManagePostLinks}, ${run.workflowId})
    RETURNING ${db.unsafe(COLUMNS)}`;
  return row!;
}

export async function getBulkChange(db: Db, id: string): Promise<BulkChangeRow | null> {
  const [row] = await db<BulkChangeRow[]>`SELECT ${db.unsafe(COLUMNS)} FROM bulk_changes WHERE id = ${id}`;
  return row ?? null;
}

/** How many live links a list filter matches now (the confirmation's count), counted up to `cap`. */
export async function countFilteredLinks(db: Db, filter: LinkListFilter, cap: number): Promise<number> {
  const conditions = await linkFilterConditions(db, filter);
  const where = conditions.reduce((acc, cond) => db`${acc} AND ${cond}`);
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM (SELECT 1 FROM links WHERE ${where} LIMIT ${cap}) AS matched`;
  return row?.n ?? 0;
}

/**
 * Fixes the run's selection: its codes (the live ones) or every live link its filter matches, in one statement,
 * then the total. Idempotent: a retried step finds the rows there and counts the same.
 */
export async function selectBulkChangeLinks(db: Db, run: BulkChangeRow): Promise<number> {
  if ('codes' in run.selection) {
    await db`
      INSERT INTO bulk_change_links (run_id, code)
      SELECT ${run.id}, l.code FROM unnest(${db.array(run.selection.codes)}::text[]) AS t(code)
      JOIN links AS l ON l.code = t.code COLLATE "C" AND l.deleted_at IS NULL
      ON CONFLICT DO NOTHING`;
  } else {
    const conditions = await linkFilterConditions(db, run.selection.filter);
    const where = conditions.reduce((acc, cond) => db`${acc} AND ${cond}`);
    await db`
      INSERT INTO bulk_change_links (run_id, code)
      SELECT ${run.id}, code FROM links WHERE ${where}
      ON CONFLICT DO NOTHING`;
  }
  const [row] = await db<{ total: number }[]>`
    UPDATE bulk_changes SET
      total = (SELECT count(*) FROM bulk_change_links WHERE run_id = ${run.id}),
      status = 'running', updated_at = now()
    WHERE id = ${run.id}
    RETURNING total`;
  return row?.total ?? 0;
}

/** The next `limit` links of the run still to do after `after` (by code), locked with their rows. */
export async function lockPendingBulkLinks(
  db: Db,
  runId: string,
  after: string,
  limit: number,
): Promise<{ codes: string[]; links: Map<string, LinkRow> }> {
  const pending = await db<{ code: string }[]>`
    SELECT code FROM bulk_change_links
    WHERE run_id = ${runId} AND state = 'pending' AND code > ${after}
    ORDER BY code LIMIT ${limit}`;
  const codes = pending.map((p) => p.code);
  if (codes.length === 0) return { codes, links: new Map() };
  const rows = await db<LinkRow[]>`
    SELECT ${db.unsafe(QUALIFIED_LINK_COLUMNS)}
    FROM unnest(${db.array(codes)}::text[]) AS t(code)
    JOIN links AS l ON l.code = t.code COLLATE "C"
    ORDER BY l.code
    FOR UPDATE OF l`;
  return { codes, links: new Map(rows.map((r) => [r.code, r])) };
}

/** One link's new values; an absent field keeps its value. */
export interface BulkLinkUpdate {
  code: string;
  tags?: string[];
  expiresAt?: Date | null;
  status?: string;
  deleted?: boolean;
  dedupeKey?: string | null;
}

/** Writes the changed links of a batch in one statement (version and updated_at move, as for every change). */
export async function updateBulkLinks(db: Db, updates: BulkLinkUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  const col = (pick: (u: BulkLinkUpdate) => string | null) => db.array(updates.map(pick) as string[]);
  const has = (pick: (u: BulkLinkUpdate) => unknown) =>
    db.array(updates.map((u) => String(pick(u) !== undefined)));
  await db`
    UPDATE links AS l SET
      tags = CASE WHEN t.set_tags THEN ARRAY(SELECT jsonb_array_elements_text(t.tags::jsonb)) ELSE l.tags END,
      expires_at = CASE WHEN t.set_expiry THEN t.expires_at::timestamptz ELSE l.expires_at END,
      status = COALESCE(t.status, l.status),
      deleted_at = CASE WHEN t.deleted THEN now() ELSE l.deleted_at END,
      dedupe_key = CASE WHEN t.set_dedupe THEN t.dedupe_key ELSE l.dedupe_key END,
      updated_at = now(), version = l.version + 1
    FROM unnest(${col((u) => u.code)}::text[], ${has((u) => u.tags)}::boolean[],
                ${col((u) => (u.tags ? JSON.stringify(u.tags) : null))}::text[],
                ${has((u) => u.expiresAt)}::boolean[], ${col((u) => u.expiresAt?.toISOString() ?? null)}::text[],
                ${col((u) => u.status ?? null)}::text[], ${db.array(updates.map((u) => String(u.deleted === true)))}::boolean[],
                ${has((u) => u.dedupeKey)}::boolean[], ${col((u) => u.dedupeKey ?? null)}::text[])
      AS t(code, set_tags, tags, set_expiry, expires_at, status, deleted, set_dedupe, dedupe_key)
    WHERE l.code = t.code COLLATE "C"`;
}

/** One audit entry per changed link, in one statement. */
export async function insertBulkAuditEntries(
  db: Db,
  entries: { code: string; action: string; before: unknown; after: unknown }[],
  options: { actor: string; reason: string },
): Promise<void> {
  if (entries.length === 0) return;
  await db`
    INSERT INTO audit_log (code, actor, action, before, after, reason)
    SELECT t.code, ${options.actor}, t.action, t.before::jsonb, t.after::jsonb, ${options.reason}
    FROM unnest(${db.array(entries.map((e) => e.code))}::text[], ${db.array(entries.map((e) => e.action))}::text[],
                ${db.array(entries.map((e) => JSON.stringify(e.before)))}::text[],
                ${db.array(entries.map((e) => JSON.stringify(e.after)))}::text[]) AS t(code, action, before, after)`;
}

/** Records what became of each link of a batch, then the run's counts. */
export async function markBulkLinks(
  db: Db,
  runId: string,
  outcomes: { code: string; state: 'applied' | 'skipped'; problem: string | null }[],
): Promise<void> {
  if (outcomes.length > 0) {
    await db`
      UPDATE bulk_change_links AS b SET state = t.state, problem = NULLIF(t.problem, '')
      FROM unnest(${db.array(outcomes.map((o) => o.code))}::text[], ${db.array(outcomes.map((o) => o.state))}::text[],
                  ${db.array(outcomes.map((o) => o.problem ?? ''))}::text[]) AS t(code, state, problem)
      WHERE b.run_id = ${runId} AND b.code = t.code COLLATE "C"`;
  }
  await db`
    UPDATE bulk_changes SET
      applied = (SELECT count(*) FROM bulk_change_links WHERE run_id = ${runId} AND state = 'applied'),
      skipped = (SELECT count(*) FROM bulk_change_links WHERE run_id = ${runId} AND state = 'skipped'),
      updated_at = now()
    WHERE id = ${runId}`;
}

export async function finishBulkChange(db: Db, runId: string, status: 'finished' | 'failed'): Promise<void> {
  await db`
    UPDATE bulk_changes SET status = ${status}, finished_at = now(), updated_at = now()
    WHERE id = ${runId} AND status <> ${status}`;
}

/** The skipped links of a run with their reasons (the progress page lists the first ones). */
export async function listSkippedBulkLinks(
  db: Db,
  runId: string,
  limit: number,
): Promise<{ code: string; problem: string | null }[]> {
  return db<{ code: string; problem: string | null }[]>`
    SELECT code, problem FROM bulk_change_links
    WHERE run_id = ${runId} AND state = 'skipped' ORDER BY code LIMIT ${limit}`;
}
