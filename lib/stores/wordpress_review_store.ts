// wordpress_reviews: what identity matching could not decide (ADR 0057), for an admin to resolve.
import type { Db } from './sql.ts';

export const REVIEW_KINDS = [
  'claim-conflict',
  'foreign-claim',
  'ambiguous',
  'reused-post-id',
  'unmatched-link',
] as const;
export type ReviewKind = (typeof REVIEW_KINDS)[number];
export type ReviewResolution = 'bind' | 'gone' | 'keep';

export interface NewReview {
  site: string;
  kind: ReviewKind;
  postId?: number | null;
  code?: string | null;
  permalink?: string | null;
  candidates?: string[];
  detail: string;
}

export interface ReviewRow {
  id: number;
  site: string;
  kind: ReviewKind;
  postId: number | null;
  code: string | null;
  permalink: string | null;
  candidates: string[];
  detail: string;
  status: 'open' | 'resolved';
  resolution: ReviewResolution | null;
  resolvedBy: string | null;
  resolvedAt: Date | null;
  createdAt: Date;
}

const COLUMNS = `id::int AS id, site, kind, post_id::float8 AS "postId", code, permalink, candidates, detail,
  status, resolution, resolved_by AS "resolvedBy", resolved_at AS "resolvedAt", created_at AS "createdAt"`;

/** Files one item; an open item for the same (site, kind, post, code) stands and nothing is added. */
export async function insertReview(db: Db, review: NewReview): Promise<void> {
  await db`
    INSERT INTO wordpress_reviews (site, kind, post_id, code, permalink, candidates, detail)
    VALUES (${review.site}, ${review.kind}, ${review.postId ?? null}, ${review.code ?? null},
            ${review.permalink ?? null}, ${db.array(review.candidates ?? [])}::text[], ${review.detail})
    ON CONFLICT (site, kind, (COALESCE(post_id, 0)), (COALESCE(code, ''))) WHERE status = 'open' DO NOTHING`;
}

export async function listReviews(
  db: Db,
  options: {
    site?: string | undefined;
    status?: 'open' | 'resolved' | undefined;
    limit: number;
    afterId?: number;
  },
): Promise<ReviewRow[]> {
  return db<ReviewRow[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM wordpress_reviews
    WHERE (${options.site ?? null}::text IS NULL OR site = ${options.site ?? null})
      AND (${options.status ?? null}::text IS NULL OR status = ${options.status ?? null})
      AND id > ${options.afterId ?? 0}
    ORDER BY id LIMIT ${options.limit}`;
}

export async function getReview(db: Db, id: number): Promise<ReviewRow | null> {
  const rows = await db<ReviewRow[]>`SELECT ${db.unsafe(COLUMNS)} FROM wordpress_reviews WHERE id = ${id}`;
  return rows[0] ?? null;
}

export async function getReviewForUpdate(db: Db, id: number): Promise<ReviewRow | null> {
  const rows = await db<ReviewRow[]>`
    SELECT ${db.unsafe(COLUMNS)} FROM wordpress_reviews WHERE id = ${id} FOR UPDATE`;
  return rows[0] ?? null;
}

export async function updateReviewResolved(
  db: Db,
  id: number,
  resolution: ReviewResolution,
  by: string,
): Promise<void> {
  await db`
    UPDATE wordpress_reviews SET status = 'resolved', resolution = ${resolution}, resolved_by = ${by},
      resolved_at = now()
    WHERE id = ${id} AND status = 'open'`;
}

/**
 * Closes open `reused-post-id` items whose code is no longer bound to that post ID: a later match in the pass (the
 * article's own claim, GUID or path) moved the code to its article, so the ID-only conflict no longer exists.
 * Recorded as kept by Lifeline; returns how many.
 */
export async function closeSettledReviews(db: Db, site: string): Promise<number> {
  const rows = await db`
    UPDATE wordpress_reviews r SET status = 'resolved', resolution = 'keep',
      resolved_by = 'lifeline: settled by a later match', resolved_at = now()
    WHERE r.site = ${site} AND r.status = 'open' AND r.kind = 'reused-post-id' AND r.code IS NOT NULL
      AND NOT EXISTS (
        SELECT 1 FROM links l WHERE l.code = r.code AND l.site = r.site AND l.post_id = r.post_id)
    RETURNING r.id`;
  return rows.length;
}

export async function countOpenReviews(db: Db, site: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM wordpress_reviews WHERE site = ${site} AND status = 'open'`;
  return row?.n ?? 0;
}
