import type { Db } from './sql.ts';

/** What a moderator decided about a report (migrations/0010_report_moderation.sql). */
export const REPORT_STATUSES = ['open', 'ignored', 'dismissed', 'confirmed'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

/** One reader's report as stored (the reporter only as a keyed hash). */
export interface ReportRow {
  code: string;
  reporterHash: string;
  reason: string | null;
  status: ReportStatus;
  createdAt: Date;
  resolvedAt: Date | null;
  resolvedBy: string | null;
  resolutionNote: string | null;
}

const COLUMNS = `code, reporter_hash AS "reporterHash", reason, status, created_at AS "createdAt",
  resolved_at AS "resolvedAt", resolved_by AS "resolvedBy", resolution_note AS "resolutionNote"`;

/** Records one reader's report of a link; false when this reporter had already reported it. */
export async function insertReport(
  db: Db,
  report: { code: string; reporterHash: string; reason: string | null },
): Promise<boolean> {
  const rows = await db`
    INSERT INTO reports (code, reporter_hash, reason)
    VALUES (${report.code}, ${report.reporterHash}, ${report.reason})
    ON CONFLICT (code, reporter_hash) DO NOTHING
    RETURNING 1`;
  return rows.length > 0;
}

/** The stored reports of a link, oldest first (reporters appear only as their keyed hashes). */
export async function listReports(db: Db, code: string): Promise<ReportRow[]> {
  return db<ReportRow[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM reports WHERE code = ${code} ORDER BY created_at, reporter_hash`;
}

/** How a link's reports weigh on its verdict: `standing` (open or ignored) and `confirmed` ones. */
export interface ReportCounts {
  standing: number;
  confirmed: number;
}

/** Report counts per code (codes without standing or confirmed reports are absent). */
export async function countReportsByCode(db: Db, codes: string[]): Promise<Map<string, ReportCounts>> {
  if (codes.length === 0) return new Map();
  const rows = await db<{ code: string; standing: number; confirmed: number }[]>`
    SELECT r.code,
           count(*) FILTER (WHERE r.status IN ('open', 'ignored'))::int AS standing,
           count(*) FILTER (WHERE r.status = 'confirmed')::int AS confirmed
    FROM unnest(${db.array(codes)}::text[]) AS t(code) JOIN reports AS r ON r.code = t.code COLLATE "C"
    WHERE r.status IN ('open', 'ignored', 'confirmed')
    GROUP BY r.code`;
  return new Map(rows.map((r) => [r.code, { standing: r.standing, confirmed: r.confirmed }]));
}

/** One link in the moderation queue: its open reports summed up, newest report first. */
export interface ReportQueueRow {
  code: string;
  targetUrl: string;
  status: string;
  safety: string;
  owner: string;
  title: string | null;
  openReports: number;
  /** Reports of the link in any state. */
  totalReports: number;
  firstReportedAt: Date;
  lastReportedAt: Date;
  /** Open reports per reason, most frequent first. */
  reasons: { reason: string; count: number }[];
}

/**
 * Links with `status` reports (open: the queue), most recently reported first, after `cursor` (the last row's
 * lastReportedAt and code).
 */
export async function listReportQueue(
  db: Db,
  options: { status: ReportStatus; limit: number; cursor?: { lastReportedAt: Date; code: string } },
): Promise<ReportQueueRow[]> {
  const after = options.cursor
    ? db`WHERE (q."lastReportedAt", q.code) < (${options.cursor.lastReportedAt}, ${options.cursor.code})`
    : db``;
  return db<ReportQueueRow[]>`
    WITH q AS (
      SELECT r.code, count(*)::int AS "openReports", min(r.created_at) AS "firstReportedAt",
             max(r.created_at) AS "lastReportedAt"
      FROM reports r WHERE r.status = ${options.status} GROUP BY r.code
    )
    SELECT q.code, l.target_url AS "targetUrl", l.status, l.safety, l.owner, l.title, q."openReports",
           (SELECT count(*)::int FROM reports a WHERE a.code = q.code) AS "totalReports",
           q."firstReportedAt", q."lastReportedAt",
           (SELECT coalesce(json_agg(json_build_object('reason', x.reason, 'count', x.n) ORDER BY x.n DESC, x.reason), '[]'::json)
              FROM (SELECT coalesce(r.reason, '') AS reason, count(*)::int AS n FROM reports r
                    WHERE r.code = q.code AND r.status = ${options.status} GROUP BY 1) x) AS reasons
    FROM q JOIN links l ON l.code = q.code
    ${after}
    ORDER BY q."lastReportedAt" DESC, q.code DESC
    LIMIT ${options.limit}`;
}

/**
 * Sets the reports of `code` that are in one of `from` to `to`, with who and why; returns how many changed.
 */
export async function updateReportStatus(
  db: Db,
  change: { code: string; from: ReportStatus[]; to: ReportStatus; by: string; note: string | null },
): Promise<number> {
  const rows = await db`
    UPDATE reports SET status = ${change.to}, resolved_at = now(), resolved_by = ${change.by},
                       resolution_note = ${change.note}
    WHERE code = ${change.code} AND status = ANY(${db.array(change.from)}::text[])
    RETURNING 1`;
  return rows.length;
}

/** Open reports of links whose owner is `owner` (an editor's own links): codes with their open report count. */
export async function listOpenReportsByOwner(
  db: Db,
  owner: string,
  limit: number,
): Promise<{ code: string; openReports: number }[]> {
  return db<{ code: string; openReports: number }[]>`
    SELECT r.code, count(*)::int AS "openReports" FROM reports r JOIN links l ON l.code = r.code
    WHERE r.status = 'open' AND l.owner = ${owner} AND l.deleted_at IS NULL
    GROUP BY r.code ORDER BY max(r.created_at) DESC LIMIT ${limit}`;
}
