import type { Db } from './sql.ts';

// SQL of the stored-target review (lib/links/review_stored_targets.ts): a walk over every link by code, and
// the one write it makes, guarded so that a link changed meanwhile is never overwritten.

/** The targets of one page of links after `cursor` (by code), deleted ones included. */
export async function listStoredTargets(
  db: Db,
  cursor: string,
  limit: number,
): Promise<{ code: string; targetUrl: string; expiredUrl: string | null }[]> {
  return db`
    SELECT code, target_url AS "targetUrl", expired_url AS "expiredUrl"
    FROM links WHERE code > ${cursor} ORDER BY code LIMIT ${limit}` as never;
}

/**
 * Replaces a link's target or fallback by its canonical form, only while it still holds `before` (a concurrent
 * edit wins); true when written (the version moves, so every replica refreshes on its next read).
 */
export async function updateStoredTarget(
  db: Db,
  change: { code: string; field: 'targetUrl' | 'expiredUrl'; before: string; after: string },
): Promise<boolean> {
  const rows =
    change.field === 'targetUrl'
      ? await db`
          UPDATE links SET target_url = ${change.after}, updated_at = now(), version = version + 1
          WHERE code = ${change.code} AND target_url = ${change.before} RETURNING 1`
      : await db`
          UPDATE links SET expired_url = ${change.after}, updated_at = now(), version = version + 1
          WHERE code = ${change.code} AND expired_url = ${change.before} RETURNING 1`;
  return rows.length > 0;
}
