-- Up Migration
-- The sync-queue drainer takes changes to links first, then links someone just made, then links a backfill minted
-- for archive posts (ADR 0104): a change (a retarget, a block, an adopted back-half still pointing at the old CMS)
-- is on a link readers may already follow through a replica; an archive link has not been given to anyone yet.
-- `priority` is 0, 1 or 2 in that order; the due index leads with it, so each class is one range read, oldest
-- due first. Rows queued before this migration are classed by their reason.
ALTER TABLE link_sync_queue ADD COLUMN priority smallint NOT NULL DEFAULT 0 CHECK (priority BETWEEN 0 AND 2);
UPDATE link_sync_queue
SET priority = CASE WHEN reason LIKE 'link.created by backfill %' THEN 2 ELSE 1 END
WHERE reason LIKE 'link.created %';
CREATE INDEX link_sync_queue_due_by_priority_idx ON link_sync_queue (priority, next_attempt_at, code);
DROP INDEX IF EXISTS link_sync_queue_due_idx;

-- Down Migration
CREATE INDEX IF NOT EXISTS link_sync_queue_due_idx ON link_sync_queue (next_attempt_at, code);
DROP INDEX IF EXISTS link_sync_queue_due_by_priority_idx;
ALTER TABLE link_sync_queue DROP COLUMN IF EXISTS priority;
