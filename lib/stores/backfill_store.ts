// SQL of the archive backfill (lib/publishing/backfill_posts.ts): runs, the per-post answers of each run, the
// links a batch creates or binds, and what is left to propagate.
import type { LinkRow } from './link_rows.ts';
import { KEY_DOMAIN_SQL, LINK_COLUMNS } from './link_store.ts';
import type { Db } from './sql.ts';

export interface BackfillRunRow {
  site: string;
  runId: string;
  workflowId: string;
  status: 'running' | 'finished';
  total: number;
  restUrl: string | null;
  lastBatch: number;
  finalReceived: boolean;
  startedAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

const RUN_COLUMNS = `site, run_id AS "runId", workflow_id AS "workflowId", status, total, rest_url AS "restUrl",
  last_batch AS "lastBatch", final_received AS "finalReceived", started_at AS "startedAt",
  updated_at AS "updatedAt", finished_at AS "finishedAt"`;

/** Records that a batch of a run arrived (the run row is created by its first batch, whichever that is). */
export async function upsertBackfillRun(
  db: Db,
  run: {
    site: string;
    runId: string;
    workflowId: string;
    total: number;
    restUrl: string;
    batch: number;
    final: boolean;
  },
): Promise<void> {
  await db`
    INSERT INTO backfill_runs (site, run_id, workflow_id, total, rest_url, last_batch, final_received)
    VALUES (${run.site}, ${run.runId}, ${run.workflowId}, ${run.total}, ${run.restUrl}, ${run.batch}, ${run.final})
    ON CONFLICT (site, run_id) DO UPDATE SET
      total = EXCLUDED.total, rest_url = EXCLUDED.rest_url,
      last_batch = GREATEST(backfill_runs.last_batch, EXCLUDED.last_batch),
      final_received = backfill_runs.final_received OR EXCLUDED.final_received,
      updated_at = now()`;
}

export async function getBackfillRun(db: Db, site: string, runId: string): Promise<BackfillRunRow | null> {
  const rows = await db<BackfillRunRow[]>`
    SELECT ${db.unsafe(RUN_COLUMNS)} FROM backfill_runs WHERE site = ${site} AND run_id = ${runId}`;
  return rows[0] ?? null;
}

/** Closes a run (idempotent). */
export async function finishBackfillRun(db: Db, site: string, runId: string): Promise<void> {
  await db`
    UPDATE backfill_runs SET status = 'finished', finished_at = COALESCE(finished_at, now()), updated_at = now()
    WHERE site = ${site} AND run_id = ${runId}`;
}

/** The newest runs, newest first. */
export async function listBackfillRuns(db: Db, limit: number): Promise<BackfillRunRow[]> {
  return db<BackfillRunRow[]>`
    SELECT ${db.unsafe(RUN_COLUMNS)} FROM backfill_runs ORDER BY started_at DESC LIMIT ${limit}`;
}

/** One post's answer in a run. */
export interface BackfillPostRow {
  postId: number;
  batch: number;
  outcome: string;
  code: string | null;
  detail: string | null;
  propagated: boolean;
}

/** The answers already recorded for some posts of a run (a batch sent again). */
export async function listBackfillPosts(
  db: Db,
  site: string,
  runId: string,
  postIds: number[],
): Promise<Map<number, BackfillPostRow>> {
  if (postIds.length === 0) return new Map();
  // One primary-key lookup per post (LATERAL … LIMIT 1 keeps the nested loop): with `post_id = ANY(…)` and no
  // statistics yet (a new archive, autovacuum behind) the planner scanned the run's whole key range and tested
  // every row against the 500 ids: 3.2 s per batch at 111,000 answers, 1.2 ms this way (ADR 0088).
  const rows = await db<BackfillPostRow[]>`
    SELECT b.post_id AS "postId", b.batch, b.outcome, b.code, b.detail, b.propagated
    FROM unnest(${db.array(postIds.map(String))}::bigint[]) AS t(post_id)
    CROSS JOIN LATERAL (
      SELECT * FROM backfill_posts
      WHERE site = ${site} AND run_id = ${runId} AND post_id = t.post_id LIMIT 1
    ) AS b`;
  return new Map(rows.map((r) => [r.postId, r]));
}

/** Records the answers of a batch (a post already recorded keeps its first answer). */
export async function insertBackfillPosts(
  db: Db,
  site: string,
  runId: string,
  rows: {
    postId: number;
    batch: number;
    outcome: string;
    code: string | null;
    detail: string | null;
    propagated: boolean;
  }[],
): Promise<void> {
  if (rows.length === 0) return;
  await db`
    INSERT INTO backfill_posts (site, run_id, post_id, batch, outcome, code, detail, propagated)
    SELECT ${site}, ${runId}, t.post_id, t.batch, t.outcome, NULLIF(t.code, ''), NULLIF(t.detail, ''), t.propagated
    FROM unnest(${db.array(rows.map((r) => String(r.postId)))}::bigint[],
                ${db.array(rows.map((r) => String(r.batch)))}::int[],
                ${db.array(rows.map((r) => r.outcome))}::text[],
                ${db.array(rows.map((r) => r.code ?? ''))}::text[],
                ${db.array(rows.map((r) => r.detail ?? ''))}::text[],
                ${db.array(rows.map((r) => String(r.propagated)))}::boolean[])
      AS t(post_id, batch, outcome, code, detail, propagated)
    ON CONFLICT DO NOTHING`;
}

/** The links of these posts of a site (deleted ones included), by post id. */
export async function listLinksByPostIds(
  db: Db,
  site: string,
  postIds: number[],
): Promise<Map<number, LinkRow>> {
  if (postIds.length === 0) return new Map();
  // One lookup per post through links (site, post_id), whatever the statistics say (see listBackfillPosts).
  const rows = await db<LinkRow[]>`
    SELECT l.* FROM unnest(${db.array(postIds.map(String))}::bigint[]) AS t(post_id)
    CROSS JOIN LATERAL (
      SELECT ${db.unsafe(LINK_COLUMNS)} FROM links WHERE site = ${site} AND post_id = t.post_id LIMIT 1
    ) AS l`;
  return new Map(rows.map((r) => [r.postId!, r]));
}

/**
 * Links imported from Bitly (origin `import`, bound to no post, not deleted) pointing exactly at one of
 * `targets`, oldest first per target: what a backfilled post may adopt.
 */
export async function listUnboundImportsByTarget(db: Db, targets: string[]): Promise<Map<string, LinkRow>> {
  if (targets.length === 0) return new Map();
  const rows = await db<LinkRow[]>`
    SELECT DISTINCT ON (target_url) ${db.unsafe(LINK_COLUMNS)} FROM links
    WHERE site IS NULL AND origin = 'import' AND deleted_at IS NULL
      AND md5(target_url) = ANY(SELECT md5(t) FROM unnest(${db.array(targets)}::text[]) AS t)
      AND target_url = ANY(${db.array(targets)}::text[])
    ORDER BY target_url, created_at, code`;
  return new Map(rows.map((r) => [r.targetUrl, r]));
}

/** Unpublish deliveries received for these posts, newest per post (an unpublish newer than a batch wins). */
export async function listNewestUnpublishes(
  db: Db,
  site: string,
  postIds: number[],
): Promise<Map<number, Date>> {
  if (postIds.length === 0) return new Map();
  // Per post along webhook_deliveries (site, post_id, occurred_at DESC): the newest unpublish, whatever else
  // the newsroom's deliveries hold (see listBackfillPosts).
  const rows = await db<{ postId: number; at: Date }[]>`
    SELECT t.post_id AS "postId", d.occurred_at AS at
    FROM unnest(${db.array(postIds.map(String))}::bigint[]) AS t(post_id)
    CROSS JOIN LATERAL (
      SELECT occurred_at FROM webhook_deliveries
      WHERE site = ${site} AND post_id = t.post_id AND event = 'post.unpublished'
      ORDER BY occurred_at DESC LIMIT 1
    ) AS d`;
  return new Map(rows.map((r) => [r.postId, r.at]));
}

/** A link a backfill writes: a post's new link (minted, or under an adopted back-half). */
export interface BackfilledLink {
  code: string;
  targetUrl: string;
  status: 'active' | 'pending';
  safety: string;
  safetyReason: string | null;
  safetyCheckedAt: Date | null;
  postId: number;
  title: string | null;
  sourceVersion: Date;
}

/**
 * Inserts a batch's new links and their audit entries in one statement; a code or post already taken is
 * skipped (ON CONFLICT DO NOTHING) and simply missing from the rows returned.
 */
export async function insertBackfilledLinks(
  db: Db,
  site: string,
  links: BackfilledLink[],
  audit: { actor: string; reason: string },
): Promise<LinkRow[]> {
  if (links.length === 0) return [];
  const col = (pick: (l: BackfilledLink) => string | null) =>
    db.array(links.map((l) => pick(l) ?? '') as string[]);
  return db<LinkRow[]>`
    WITH input AS (
      SELECT * FROM unnest(
        ${col((l) => l.code)}::text[], ${col((l) => l.targetUrl)}::text[], ${col((l) => l.status)}::text[],
        ${col((l) => l.safety)}::text[], ${col((l) => l.safetyReason)}::text[],
        ${col((l) => l.safetyCheckedAt?.toISOString() ?? null)}::text[], ${col((l) => String(l.postId))}::text[],
        ${col((l) => l.title)}::text[], ${col((l) => l.sourceVersion.toISOString())}::text[]
      ) AS t(code, target_url, status, safety, safety_reason, safety_checked_at, post_id, title, source_version)
    ), inserted AS (
      INSERT INTO links (code, domain, target_url, status, safety, safety_reason, safety_checked_at, origin, site,
                         post_id, title, owner, source_version)
      SELECT code, ${db.unsafe(KEY_DOMAIN_SQL)}, target_url, status, safety, NULLIF(safety_reason, ''),
             NULLIF(safety_checked_at, '')::timestamptz, 'wordpress', ${site}, post_id::bigint,
             NULLIF(title, ''), ${audit.actor}, source_version::timestamptz
      FROM input
      ON CONFLICT DO NOTHING
      RETURNING ${db.unsafe(LINK_COLUMNS)}
    ), audited AS (
      INSERT INTO audit_log (code, actor, action, after, reason)
      SELECT code, ${audit.actor}, 'link.minted',
             jsonb_build_object('url', "targetUrl", 'status', status, 'postId', "postId", 'backfill', true),
             ${audit.reason}
      FROM inserted
    )
    SELECT * FROM inserted`;
}

/**
 * Binds an imported (unbound) link to a post: it becomes the post's canonical link, pointing at the permalink.
 * False when the link is no longer unbound (a race) or the post already has one.
 */
export async function bindLinkToPost(
  db: Db,
  input: {
    code: string;
    site: string;
    postId: number;
    targetUrl: string;
    title: string | null;
    sourceVersion: Date;
  },
): Promise<LinkRow | null> {
  const rows = await db<LinkRow[]>`
    UPDATE links SET site = ${input.site}, post_id = ${input.postId}, target_url = ${input.targetUrl},
      title = COALESCE(${input.title}, title), source_version = ${input.sourceVersion},
      status = CASE WHEN status = 'gone' THEN 'active' ELSE status END,
      updated_at = now(), version = version + 1
    WHERE code = ${input.code} AND site IS NULL AND deleted_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM links WHERE site = ${input.site} AND post_id = ${input.postId})
    RETURNING ${db.unsafe(LINK_COLUMNS)}`;
  return rows[0] ?? null;
}

/** Appends many audit entries in one statement. */
export async function insertAuditEntries(
  db: Db,
  entries: {
    code: string;
    actor: string;
    action: string;
    before?: unknown;
    after?: unknown;
    reason: string;
  }[],
): Promise<void> {
  if (entries.length === 0) return;
  const json = (v: unknown) => (v === undefined ? '' : JSON.stringify(v));
  await db`
    INSERT INTO audit_log (code, actor, action, before, after, reason)
    SELECT code, actor, action, NULLIF(before, '')::jsonb, NULLIF(after, '')::jsonb, reason
    FROM unnest(${db.array(entries.map((e) => e.code))}::text[], ${db.array(entries.map((e) => e.actor))}::text[],
                ${db.array(entries.map((e) => e.action))}::text[], ${db.array(entries.map((e) => json(e.before)))}::text[],
                ${db.array(entries.map((e) => json(e.after)))}::text[], ${db.array(entries.map((e) => e.reason))}::text[])
      AS t(code, actor, action, before, after, reason)`;
}

/** Posts of a run whose new link still has to reach the serving store and its sync workflow. */
export async function listUnpropagatedPosts(
  db: Db,
  site: string,
  runId: string,
  limit: number,
): Promise<{ postId: number; code: string }[]> {
  return db<{ postId: number; code: string }[]>`
    SELECT post_id AS "postId", code FROM backfill_posts
    WHERE site = ${site} AND run_id = ${runId} AND NOT propagated
    ORDER BY post_id LIMIT ${limit}`;
}

export async function updatePostsPropagated(
  db: Db,
  site: string,
  runId: string,
  postIds: number[],
): Promise<void> {
  if (postIds.length === 0) return;
  await db`
    UPDATE backfill_posts SET propagated = true
    WHERE site = ${site} AND run_id = ${runId} AND post_id = ANY(${db.array(postIds.map(String))}::bigint[])`;
}

/**
 * How many of a run's answers still wait to be queued for propagation, read through the partial index of
 * unpropagated rows: what a propagation step needs after every batch, in time proportional to what waits (none,
 * since batches queue their links themselves), not to the run's size (countBackfillPosts reads every answer).
 */
export async function countUnpropagatedPosts(db: Db, site: string, runId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM backfill_posts WHERE site = ${site} AND run_id = ${runId} AND NOT propagated`;
  return row?.n ?? 0;
}

/** A run's counts: posts answered per outcome, and how many new links are still to propagate. */
export async function countBackfillPosts(
  db: Db,
  site: string,
  runId: string,
): Promise<{ outcomes: Record<string, number>; received: number; unpropagated: number }> {
  const rows = await db<{ outcome: string; n: number; waiting: number }[]>`
    SELECT outcome, count(*)::int AS n, count(*) FILTER (WHERE NOT propagated)::int AS waiting
    FROM backfill_posts WHERE site = ${site} AND run_id = ${runId} GROUP BY outcome`;
  const outcomes: Record<string, number> = {};
  let received = 0;
  let unpropagated = 0;
  for (const row of rows) {
    outcomes[row.outcome] = row.n;
    received += row.n;
    unpropagated += row.waiting;
  }
  return { outcomes, received, unpropagated };
}

/**
 * Vendor rows for back-halves adopted from Bitly: `pending` with the custom bitlink's id, so the link's first
 * sync reads that bitlink (ours, in our group) and brings it to the permalink instead of creating another.
 */
export async function insertAdoptedVendorLinks(
  db: Db,
  rows: { code: string; vendorId: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  await db`
    INSERT INTO vendor_links (code, vendor, vendor_id, state, attempts)
    SELECT t.code, 'bitly', t.vendor_id, 'pending', 0
    FROM unnest(${db.array(rows.map((r) => r.code))}::text[], ${db.array(rows.map((r) => r.vendorId))}::text[])
      AS t(code, vendor_id)
    ON CONFLICT (code, vendor) DO NOTHING`;
}
