import type { LinkRow } from './link_rows.ts';
import { QUALIFIED_LINK_COLUMNS } from './link_store.ts';
import type { Db } from './sql.ts';

// SQL of reconciliation runs: reconcile_marks (what a run found and repaired) and the Postgres side of the diff.

export type ReconcileSide = 'bitly' | 'serving' | 'expiry' | 'wordpress';
export const DRIFTS = ['missing', 'stale', 'extra', 'collision', 'unimportable', 'stray', 'gone'] as const;
export type Drift = (typeof DRIFTS)[number];

/**
 * Records what a run found for some codes. The first finding for a (run, side, code) is kept: a page
 * processed again after a crash finds its earlier repairs in sync and must not erase the drift it repaired.
 * Returns the codes that already had a mark (none, unless the page is being processed again).
 */
export async function insertMarks(
  db: Db,
  runId: string,
  side: ReconcileSide,
  marks: { code: string; drift: Drift | null }[],
): Promise<string[]> {
  if (marks.length === 0) return [];
  const inserted = await db<{ code: string }[]>`
    INSERT INTO reconcile_marks (run_id, side, code, drift)
    SELECT ${runId}, ${side}, t.code, NULLIF(t.drift, '')
    FROM unnest(${db.array(marks.map((m) => m.code))}::text[], ${db.array(marks.map((m) => m.drift ?? ''))}::text[])
      AS t(code, drift)
    ON CONFLICT DO NOTHING
    RETURNING code`;
  if (inserted.length === marks.length) return [];
  const fresh = new Set(inserted.map((r) => r.code));
  return marks.filter((m) => !fresh.has(m.code)).map((m) => m.code);
}

/** Marks drifts of a run as repaired (or found back in sync on a later look). */
export async function updateMarksRepaired(
  db: Db,
  runId: string,
  side: ReconcileSide,
  codes: string[],
): Promise<void> {
  if (codes.length === 0) return;
  // Each code's mark is found through the primary key (a scalar subquery is one index probe per code, whatever
  // the statistics say), then updated by its row address. A join of the codes with the marks was planned on
  // statistics that lag a run by up to a minute of autovacuum: the run's marks looked like a handful, so every
  // chunk hashed all of them (measured: 75-97 ms for 500 codes at 90,000 marks, growing with the run, against
  // 3 ms this way). Two attempts of one step racing on the same mark both set the same flag.
  await db`
    UPDATE reconcile_marks AS m SET repaired = true
    WHERE m.ctid = ANY(ARRAY(
      SELECT (SELECT k.ctid FROM reconcile_marks AS k
              WHERE k.run_id = ${runId} AND k.side = ${side} AND k.code = t.code COLLATE "C" AND k.drift IS NOT NULL)
      FROM unnest(${db.array(codes)}::text[]) AS t(code)))`;
}

/** What a side of a run found: codes seen, drifts by kind, repaired by kind, and a few unrepaired codes. */
export interface ReconcileSideSummary {
  seen: number;
  drift: Partial<Record<Drift, number>>;
  repaired: Partial<Record<Drift, number>>;
  unrepaired: string[];
}

/** Counts a run's marks (see insertMarks). */
export async function summarizeMarks(
  db: Db,
  runId: string,
  side: ReconcileSide,
): Promise<ReconcileSideSummary> {
  const rows = await db<{ drift: Drift | null; marks: number; repaired: number }[]>`
    SELECT drift, count(*)::int AS marks, count(*) FILTER (WHERE repaired)::int AS repaired
    FROM reconcile_marks WHERE run_id = ${runId} AND side = ${side} GROUP BY drift`;
  const unrepaired = await db<{ code: string }[]>`
    SELECT code FROM reconcile_marks
    WHERE run_id = ${runId} AND side = ${side} AND drift IS NOT NULL AND NOT repaired ORDER BY code LIMIT 20`;
  const summary: ReconcileSideSummary = {
    seen: 0,
    drift: {},
    repaired: {},
    unrepaired: unrepaired.map((r) => r.code),
  };
  for (const row of rows) {
    summary.seen += row.marks;
    if (row.drift) {
      summary.drift[row.drift] = row.marks;
      if (row.repaired > 0) summary.repaired[row.drift] = row.repaired;
    }
  }
  return summary;
}

/**
 * A side's drift by short domain (host part of each mark's key; '' for the default), for the metrics: which
 * domain's copy drifted. Only domains with a mark appear.
 */
export async function summarizeMarksByDomain(
  db: Db,
  runId: string,
  side: ReconcileSide,
): Promise<{ domain: string; drift: Partial<Record<Drift, number>>; repaired: number }[]> {
  const rows = await db<{ domain: string; drift: Drift | null; marks: number; repaired: number }[]>`
    SELECT CASE WHEN strpos(code, '/') > 0 THEN split_part(code, '/', 1) ELSE '' END AS domain, drift,
      count(*)::int AS marks, count(*) FILTER (WHERE repaired)::int AS repaired
    FROM reconcile_marks WHERE run_id = ${runId} AND side = ${side} GROUP BY 1, 2 ORDER BY 1`;
  const byDomain = new Map<
    string,
    { domain: string; drift: Partial<Record<Drift, number>>; repaired: number }
  >();
  for (const row of rows) {
    const entry = byDomain.get(row.domain) ?? { domain: row.domain, drift: {}, repaired: 0 };
    if (row.drift) {
      entry.drift[row.drift] = row.marks;
      entry.repaired += row.repaired;
    }
    byDomain.set(row.domain, entry);
  }
  return [...byDomain.values()];
}

/** Refreshes the planner's statistics of reconcile_marks (it grows by thousands of rows within a run). */
export async function analyzeMarks(db: Db): Promise<void> {
  await db`ANALYZE reconcile_marks`;
}

/** Forgets a finished run's marks. */
export async function deleteMarks(db: Db, runId: string): Promise<void> {
  await db`DELETE FROM reconcile_marks WHERE run_id = ${runId}`;
}

/** Links (by code) one statement of the missing pass covers: its window. */
export const UNSEEN_WINDOW = 20_000;

/**
 * Active links in the window (`cursor`, `through`] (by code; `through` null: to the last link) the vendor was not
 * seen holding in this run: what it lacks, all of them, in code order. Links created after the run started are
 * left to their own sync; with `skipInhouseOnly`, so are archive links kept off Bitly (vendor state `inhouse`).
 *
 * The caller bounds the window (findCodeWindowEnd, UNSEEN_WINDOW links): where Bitly holds nearly every link, the
 * next link it lacks could be millions of links away, and one statement walking them all would outlast the
 * activity's heartbeat timeout at 10,000,000 links (ADR 0100). Within the window, the run's marks are read once,
 * as a range of their primary key, and hashed (a hashed SubPlan), rather than probed once per link: at 10,000,000
 * links the marks' index holds 4.6-8.8 million entries, and a probe per link cost 4.5 buffers and, with the link's
 * own, most of the pass's time (docs/BENCHMARKS.md, "The missing pass reads a window's marks once"). The same goes
 * for the archive links kept off Bitly.
 */
export async function listUnseenActiveCodes(
  db: Db,
  options: {
    runId: string;
    startedAt: Date;
    cursor: string;
    /** The last code to look at (a window's end); null: to the end. */
    through: string | null;
    skipInhouseOnly?: boolean;
    /** The short domains whose Bitly pages were read (stored names); default: the default's only. */
    domains?: readonly string[];
  },
): Promise<string[]> {
  const upTo = (column: string) =>
    options.through === null ? db`` : db`AND ${db(column)} <= ${options.through}`;
  const rows = await db<{ code: string }[]>`
    SELECT l.code FROM links AS l
    WHERE l.status = 'active' AND l.deleted_at IS NULL AND l.created_at < ${options.startedAt}
      AND l.code > ${options.cursor} ${upTo('l.code')}
      -- The short domains whose Bitly domains were read (ADR 0073); one without any keeps its links off Bitly.
      AND l.domain = ANY(${db.array([...(options.domains ?? [''])])}::text[])
      -- NOT IN over a subquery (no NULL codes) is a hashed SubPlan: the window's marks, read once.
      AND l.code NOT IN (SELECT m.code FROM reconcile_marks AS m
                         WHERE m.run_id = ${options.runId} AND m.side = 'bitly'
                           AND m.code > ${options.cursor} ${upTo('m.code')}
                           AND m.drift IS DISTINCT FROM 'missing')
      AND NOT (${options.skipInhouseOnly === true} AND l.code IN (
        SELECT v.code FROM vendor_links AS v
        WHERE v.vendor = 'bitly' AND v.state = 'inhouse' AND v.code > ${options.cursor} ${upTo('v.code')}))
    ORDER BY l.code`;
  return rows.map((r) => r.code);
}

/** Links by code after `cursor` with one of `statuses` (deleted ones excluded). */
export async function listLinksAfter(
  db: Db,
  options: { cursor: string; limit: number; statuses: readonly string[]; domain?: string },
): Promise<LinkRow[]> {
  // domain: one short domain's links only (its stored name, '' for the default).
  const domain = options.domain === undefined ? db`` : db`AND l.domain = ${options.domain}`;
  return db<LinkRow[]>`
    SELECT ${db.unsafe(QUALIFIED_LINK_COLUMNS)} FROM links AS l
    WHERE l.deleted_at IS NULL AND l.status = ANY(${db.array([...options.statuses])}) AND l.code > ${options.cursor}
      ${domain}
    ORDER BY l.code LIMIT ${options.limit}`;
}

/** Writes (or refreshes) a vendor mapping as synced: an imported link is already where the vendor has it. */
export async function upsertVendorMapping(
  db: Db,
  mapping: { code: string; vendor: string; vendorId: string; syncedUrl: string },
): Promise<void> {
  await db`
    INSERT INTO vendor_links (code, vendor, vendor_id, state, synced_url, attempts, synced_at)
    VALUES (${mapping.code}, ${mapping.vendor}, ${mapping.vendorId}, 'synced', ${mapping.syncedUrl}, 0, now())
    ON CONFLICT (code, vendor) DO UPDATE SET vendor_id = EXCLUDED.vendor_id, state = 'synced',
      synced_url = EXCLUDED.synced_url, last_error = NULL, synced_at = now(), updated_at = now()`;
}

/**
 * Live active links still not expired this long after their expires_at (the sweeper's backlog beyond a normal
 * sweep), oldest first, through links_expiry_due_idx; at most `limit`.
 */
export async function listOverdueExpiries(
  db: Db,
  options: { graceMs: number; limit: number },
): Promise<{ code: string; expiresAt: Date }[]> {
  return db<{ code: string; expiresAt: Date }[]>`
    SELECT code, expires_at AS "expiresAt" FROM links
    WHERE status = 'active' AND deleted_at IS NULL
      AND expires_at <= now() - make_interval(secs => ${options.graceMs / 1000})
    ORDER BY expires_at, code LIMIT ${options.limit}`;
}

/** How many links a reconciliation run imported (their audit entries carry the run's reason). */
/** Active archive links kept off Bitly (vendor state `inhouse`): what Bitly cannot answer while it fronts. */
export async function countInhouseOnlyLinks(db: Db): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM vendor_links AS v JOIN links AS l ON l.code = v.code
    WHERE v.vendor = 'bitly' AND v.state = 'inhouse' AND l.status = 'active' AND l.deleted_at IS NULL`;
  return row?.n ?? 0;
}

export async function countImportedLinks(db: Db, reason: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM audit_log WHERE action = 'link.imported' AND reason = ${reason}`;
  return row?.n ?? 0;
}
