// SQL of the post ↔ link lifecycle (lib/publishing/post_lifecycle.ts): the per-article lock, the ordering of
// WordPress events (links.source_version), and the code of a link that was never shared.
import type { Db, Tx } from './sql.ts';

/** Serialises everything that touches one article's link; the (site, post_id) UNIQUE key is the backstop. */
export async function lockPost(tx: Tx, site: string, postId: number): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`post|${site}|${postId}`}, 0))`;
}

/** True when `occurredAt` is older than the newest event already applied to the link (out of order). */
export async function isOlderThanSourceVersion(db: Db, code: string, occurredAt: string): Promise<boolean> {
  const [row] = await db<{ stale: boolean }[]>`
    SELECT COALESCE(${occurredAt}::timestamptz < source_version, false) AS stale FROM links WHERE code = ${code}`;
  return row?.stale ?? false;
}

/** Records the newest event applied to the link; microsecond precision, as sent (a Date would round it). */
export async function updateSourceVersion(db: Db, code: string, occurredAt: string): Promise<void> {
  await db`UPDATE links SET source_version = ${occurredAt}::timestamptz WHERE code = ${code}`;
}

/** True when an unpublish of this post newer than `occurredAt` was already received. */
export async function hasNewerUnpublish(
  db: Db,
  options: { site: string; postId: number; occurredAt: string },
): Promise<boolean> {
  const [newer] = await db`
    SELECT 1 FROM webhook_deliveries
    WHERE site = ${options.site} AND post_id = ${options.postId} AND event = 'post.unpublished'
      AND occurred_at > ${options.occurredAt}::timestamptz
    LIMIT 1`;
  return newer !== undefined;
}

/** Sets a delivery's occurred_at with the microsecond precision WordPress sent. */
export async function updateDeliveryOccurredAt(
  db: Db,
  deliveryId: string,
  occurredAt: string,
): Promise<void> {
  await db`UPDATE webhook_deliveries SET occurred_at = ${occurredAt}::timestamptz
           WHERE delivery_id = ${deliveryId}`;
}

/**
 * Gives a never-shared link another code: false (nothing changed) when `fresh` is taken. Only ever called for
 * `pending` links under the post lock.
 */
export async function updateLinkCode(tx: Tx, code: string, fresh: string): Promise<boolean> {
  const [taken] = await tx`SELECT 1 FROM links WHERE code = ${fresh}`;
  if (taken) return false;
  await tx`UPDATE links SET code = ${fresh}, updated_at = now(), version = version + 1 WHERE code = ${code}`;
  return true;
}
