import type { Db } from './sql.ts';

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
export async function listReports(
  db: Db,
  code: string,
): Promise<{ reporterHash: string; reason: string | null; createdAt: Date }[]> {
  return db`
    SELECT reporter_hash AS "reporterHash", reason, created_at AS "createdAt"
    FROM reports WHERE code = ${code} ORDER BY created_at, reporter_hash`;
}
