// SQL of mass retargets (lib/retarget/): runs, a CSV rule's pairs, the planned changes and their application.
import type { LinkRow } from './link_rows.ts';
import { LINK_COLUMNS } from './link_store.ts';
import type { Db } from './sql.ts';
import { recordWebhookEvents } from './webhook_outbox_store.ts';

export type RetargetRunStatus =
  | 'planning'
  | 'planned'
  | 'running'
  | 'paused'
  | 'cancelled'
  | 'finished'
  | 'failed';

export interface RetargetRunRow {
  id: string;
  kind: 'retarget' | 'undo';
  undoOf: string | null;
  rule: Record<string, unknown>;
  scope: Record<string, unknown>;
  status: RetargetRunStatus;
  workflowId: string;
  requestedBy: string;
  approvedBy: string | null;
  report: Record<string, unknown>;
  createdAt: Date;
  approvedAt: Date | null;
  finishedAt: Date | null;
  updatedAt: Date;
}

const RUN_COLUMNS = `id, kind, undo_of AS "undoOf", rule, scope, status, workflow_id AS "workflowId",
  requested_by AS "requestedBy", approved_by AS "approvedBy", report, created_at AS "createdAt",
  approved_at AS "approvedAt", finished_at AS "finishedAt", updated_at AS "updatedAt"`;

export async function insertRetargetRun(
  db: Db,
  run: {
    id: string;
    kind: 'retarget' | 'undo';
    undoOf: string | null;
    rule: unknown;
    scope: unknown;
    workflowId: string;
    requestedBy: string;
  },
): Promise<RetargetRunRow> {
  const [row] = await db<RetargetRunRow[]>`
    INSERT INTO retarget_runs (id, kind, undo_of, rule, scope, workflow_id, requested_by)
    VALUES (${run.id}, ${run.kind}, ${run.undoOf}, ${db.json(run.rule as never)}, ${db.json(run.scope as never)},
            ${run.workflowId}, ${run.requestedBy})
    RETURNING ${db.unsafe(RUN_COLUMNS)}`;
  return row!;
}

export async function getRetargetRun(db: Db, id: string): Promise<RetargetRunRow | null> {
  const rows = await db<
    RetargetRunRow[]
  >`SELECT ${db.unsafe(RUN_COLUMNS)} FROM retarget_runs WHERE id = ${id}`;
  return rows[0] ?? null;
}

export async function listRetargetRuns(db: Db, limit: number): Promise<RetargetRunRow[]> {
  return db<RetargetRunRow[]>`
    SELECT ${db.unsafe(RUN_COLUMNS)} FROM retarget_runs ORDER BY created_at DESC, id LIMIT ${limit}`;
}

/** Moves a run to `status` (finished_at set for an end), merging `report`; `from`: only from these statuses. */
export async function updateRetargetRun(
  db: Db,
  id: string,
  change: {
    status?: RetargetRunStatus;
    report?: Record<string, unknown>;
    approvedBy?: string;
    from?: RetargetRunStatus[];
  },
): Promise<RetargetRunRow | null> {
  const ended = change.status === 'finished' || change.status === 'cancelled' || change.status === 'failed';
  const from = change.from ? db`AND status = ANY(${db.array(change.from)}::text[])` : db``;
  const rows = await db<RetargetRunRow[]>`
    UPDATE retarget_runs SET
      status = COALESCE(${change.status ?? null}, status),
      report = report || ${db.json((change.report ?? {}) as never)},
      approved_by = COALESCE(${change.approvedBy ?? null}, approved_by),
      approved_at = CASE WHEN ${change.approvedBy ?? null}::text IS NOT NULL THEN COALESCE(approved_at, now()) ELSE approved_at END,
      finished_at = CASE WHEN ${ended} THEN COALESCE(finished_at, now()) ELSE finished_at END,
      updated_at = now()
    WHERE id = ${id} ${from}
    RETURNING ${db.unsafe(RUN_COLUMNS)}`;
  return rows[0] ?? null;
}

export async function insertRetargetPairs(
  db: Db,
  runId: string,
  pairs: { oldUrl: string; newUrl: string }[],
): Promise<void> {
  for (let i = 0; i < pairs.length; i += 5_000) {
    const chunk = pairs.slice(i, i + 5_000);
    await db`
      INSERT INTO retarget_pairs (run_id, old_url, new_url)
      SELECT ${runId}, o, n FROM unnest(${db.array(chunk.map((p) => p.oldUrl))}::text[],
                                        ${db.array(chunk.map((p) => p.newUrl))}::text[]) AS t(o, n)
      ON CONFLICT DO NOTHING`;
  }
}

/** Which links a rule may touch. */
export interface RetargetScope {
  /** Leave links bound to a WordPress post alone (WordPress decides their targets). */
  excludeWordPress?: boolean;
  /** Only links with these statuses (default: every status; deleted links never). */
  statuses?: string[];
}

const scopeSql = (db: Db, scope: RetargetScope) => db`
  ${scope.excludeWordPress ? db`AND l.site IS NULL` : db``}
  ${scope.statuses && scope.statuses.length > 0 ? db`AND l.status = ANY(${db.array(scope.statuses)}::text[])` : db``}`;

/** Links (not deleted, in scope) by code after `cursor`: what a prefix or regex rule is tried on. */
export async function listLinksForRetarget(
  db: Db,
  options: { cursor: string; limit: number; scope: RetargetScope },
): Promise<{ code: string; targetUrl: string }[]> {
  return db<{ code: string; targetUrl: string }[]>`
    SELECT l.code, l.target_url AS "targetUrl" FROM links AS l
    WHERE l.deleted_at IS NULL AND l.code > ${options.cursor} ${scopeSql(db, options.scope)}
    ORDER BY l.code LIMIT ${options.limit}`;
}

/** Links after `cursor` whose target is exactly one of a CSV rule's old URLs, with the new URL. */
export async function listCsvMatches(
  db: Db,
  options: { runId: string; cursor: string; limit: number; scope: RetargetScope },
): Promise<{ code: string; targetUrl: string; newUrl: string }[]> {
  return db<{ code: string; targetUrl: string; newUrl: string }[]>`
    SELECT l.code, l.target_url AS "targetUrl", p.new_url AS "newUrl"
    FROM links AS l JOIN retarget_pairs AS p
      ON p.run_id = ${options.runId} AND md5(p.old_url) = md5(l.target_url) AND p.old_url = l.target_url
    WHERE l.deleted_at IS NULL AND l.code > ${options.cursor} ${scopeSql(db, options.scope)}
    ORDER BY l.code LIMIT ${options.limit}`;
}

/** The changes a run applied, by code after `cursor` (an undo plans their reverse). */
export async function listAppliedChanges(
  db: Db,
  options: { runId: string; cursor: string; limit: number },
): Promise<{ code: string; beforeUrl: string; afterUrl: string }[]> {
  return db<{ code: string; beforeUrl: string; afterUrl: string }[]>`
    SELECT code, before_url AS "beforeUrl", after_url AS "afterUrl" FROM retarget_changes
    WHERE run_id = ${options.runId} AND state = 'applied' AND code > ${options.cursor}
    ORDER BY code LIMIT ${options.limit}`;
}

export interface PlannedChange {
  code: string;
  beforeUrl: string;
  afterUrl: string;
  state: 'planned' | 'invalid';
  problem: string | null;
  safety: string | null;
  safetyReason: string | null;
}

/** Records planned (or invalid) changes; a code planned already keeps its first plan (a retried chunk). */
export async function insertRetargetChanges(db: Db, runId: string, changes: PlannedChange[]): Promise<void> {
  if (changes.length === 0) return;
  const col = (pick: (c: PlannedChange) => string | null) => db.array(changes.map((c) => pick(c) ?? ''));
  await db`
    INSERT INTO retarget_changes (run_id, code, before_url, after_url, state, problem, safety, safety_reason)
    SELECT ${runId}, code, before_url, after_url, state, NULLIF(problem, ''), NULLIF(safety, ''), NULLIF(safety_reason, '')
    FROM unnest(${col((c) => c.code)}::text[], ${col((c) => c.beforeUrl)}::text[], ${col((c) => c.afterUrl)}::text[],
                ${col((c) => c.state)}::text[], ${col((c) => c.problem)}::text[], ${col((c) => c.safety)}::text[],
                ${col((c) => c.safetyReason)}::text[])
      AS t(code, before_url, after_url, state, problem, safety, safety_reason)
    ON CONFLICT DO NOTHING`;
}

/** Counts of a run's changes by state, and how many applied ones Bitly still has to follow. */
export async function countRetargetChanges(
  db: Db,
  runId: string,
): Promise<{ byState: Record<string, number>; bitlyPending: number }> {
  const rows = await db<{ state: string; n: number; bitly: number }[]>`
    SELECT state, count(*)::int AS n,
           count(*) FILTER (WHERE state = 'applied' AND NOT bitly_synced)::int AS bitly
    FROM retarget_changes WHERE run_id = ${runId} GROUP BY state`;
  const byState: Record<string, number> = {};
  let bitlyPending = 0;
  for (const row of rows) {
    byState[row.state] = row.n;
    bitlyPending += row.bitly;
  }
  return { byState, bitlyPending };
}

/** A page of a run's changes (optionally of one state), by code after `cursor`. */
export async function listRetargetChanges(
  db: Db,
  options: { runId: string; state?: string; cursor: string; limit: number },
): Promise<{ code: string; beforeUrl: string; afterUrl: string; state: string; problem: string | null }[]> {
  const state = options.state ? db`AND state = ${options.state}` : db``;
  return db`
    SELECT code, before_url AS "beforeUrl", after_url AS "afterUrl", state, problem FROM retarget_changes
    WHERE run_id = ${options.runId} AND code > ${options.cursor} ${state}
    ORDER BY code LIMIT ${options.limit}`;
}

/**
 * The code of the planned change `offset` places after `after` (0: the first), or null when fewer are planned:
 * where a batch splits into lanes applied side by side.
 */
export async function findPlannedCodeAt(
  db: Db,
  options: { runId: string; after: string; offset: number },
): Promise<string | null> {
  const [row] = await db<{ code: string }[]>`
    SELECT code FROM retarget_changes
    WHERE run_id = ${options.runId} AND code > ${options.after} AND state = 'planned'
    ORDER BY code OFFSET ${options.offset} LIMIT 1`;
  return row?.code ?? null;
}

/**
 * Applies the next `limit` planned changes of a run after `after` (by code): each link still pointing at the
 * planned `before_url` (and not deleted) gets `after_url` (and the new target's safety verdict), an audit entry
 * with its previous target, and its change marked applied; one that moved since the plan is marked skipped.
 * Three statements over arrays, each a join through a primary key (linear; a CTE chain here was planned as
 * nested loops over CTE scans, quadratic in the batch). Run it in a transaction.
 */
export async function applyRetargetChanges(
  db: Db,
  options: { runId: string; after: string; limit: number; actor: string; reason: string },
): Promise<{ applied: string[]; skipped: number; last: string | null; seen: number }> {
  const batch = await db<
    {
      code: string;
      beforeUrl: string;
      afterUrl: string;
      safety: string | null;
      safetyReason: string | null;
    }[]
  >`
    SELECT code, before_url AS "beforeUrl", after_url AS "afterUrl", safety, safety_reason AS "safetyReason"
    FROM retarget_changes
    WHERE run_id = ${options.runId} AND code > ${options.after} AND state = 'planned'
    ORDER BY code LIMIT ${options.limit}`;
  if (batch.length === 0) return { applied: [], skipped: 0, last: null, seen: 0 };
  const col = (pick: (c: (typeof batch)[number]) => string | null) =>
    db.array(batch.map((c) => pick(c) ?? ''));
  const updated = await db<{ code: string }[]>`
    UPDATE links AS l SET target_url = t.after_url,
      safety = COALESCE(NULLIF(t.safety, ''), l.safety),
      safety_reason = CASE WHEN t.safety = '' THEN l.safety_reason ELSE NULLIF(t.safety_reason, '') END,
      safety_checked_at = CASE WHEN t.safety = '' THEN l.safety_checked_at ELSE now() END,
      updated_at = now(), version = l.version + 1
    FROM unnest(${col((c) => c.code)}::text[], ${col((c) => c.beforeUrl)}::text[], ${col((c) => c.afterUrl)}::text[],
                ${col((c) => c.safety)}::text[], ${col((c) => c.safetyReason)}::text[])
      AS t(code, before_url, after_url, safety, safety_reason)
    WHERE l.code = t.code COLLATE "C" AND l.target_url = t.before_url AND l.deleted_at IS NULL
    RETURNING l.code`;
  const applied = new Set(updated.map((r) => r.code));
  const changed = batch.filter((c) => applied.has(c.code));
  if (changed.length > 0) {
    await db`
      INSERT INTO audit_log (code, actor, action, before, after, reason)
      SELECT t.code, ${options.actor}, 'link.retargeted', jsonb_build_object('url', t.before_url),
             jsonb_build_object('url', t.after_url), ${options.reason}
      FROM unnest(${db.array(changed.map((c) => c.code))}::text[], ${db.array(changed.map((c) => c.beforeUrl))}::text[],
                  ${db.array(changed.map((c) => c.afterUrl))}::text[]) AS t(code, before_url, after_url)`;
    await recordWebhookEvents(
      db,
      'link.updated',
      changed.map((c) => ({ data: { code: c.code, url: c.afterUrl, previousUrl: c.beforeUrl } })),
    );
  }
  await db`
    UPDATE retarget_changes AS c SET
      state = CASE WHEN t.applied THEN 'applied' ELSE 'skipped' END,
      problem = CASE WHEN t.applied THEN NULL ELSE 'the link changed (or was deleted) after the dry run' END
    FROM unnest(${db.array(batch.map((c) => c.code))}::text[],
                ${db.array(batch.map((c) => String(applied.has(c.code))))}::boolean[]) AS t(code, applied)
    WHERE c.run_id = ${options.runId} AND c.code = t.code COLLATE "C"`;
  return {
    applied: changed.map((c) => c.code),
    skipped: batch.length - changed.length,
    last: batch.at(-1)!.code,
    seen: batch.length,
  };
}

/** Applied changes Bitly has not followed yet, by code after `cursor`. */
export async function listBitlyPendingChanges(
  db: Db,
  options: { runId: string; cursor: string; limit: number },
): Promise<string[]> {
  const rows = await db<{ code: string }[]>`
    SELECT code FROM retarget_changes
    WHERE run_id = ${options.runId} AND state = 'applied' AND NOT bitly_synced AND code > ${options.cursor}
    ORDER BY code LIMIT ${options.limit}`;
  return rows.map((r) => r.code);
}

export async function updateBitlySynced(db: Db, runId: string, codes: string[]): Promise<void> {
  if (codes.length === 0) return;
  await db`
    UPDATE retarget_changes SET bitly_synced = true
    WHERE run_id = ${runId} AND code = ANY(${db.array(codes)}::text[])`;
}

/** The link rows of some codes (for tests and reports). */
export async function listLinkRows(db: Db, codes: string[]): Promise<LinkRow[]> {
  if (codes.length === 0) return [];
  return db<
    LinkRow[]
  >`SELECT ${db.unsafe(LINK_COLUMNS)} FROM links WHERE code = ANY(${db.array(codes)}::text[])`;
}
