-- Up Migration
-- The moderation queue: each reader report carries what a moderator decided about it.
--   open       waiting in the queue; counts towards the soft-block (three distinct readers: warn)
--   ignored    seen, no action: out of the queue, still counts (the link stays as it is, warned or not)
--   dismissed  unfounded: no longer counts; the soft-block it caused is lifted
--   confirmed  right: the link is blocked (451) for as long as a confirmed report stands
-- Existing reports are open: they reach the queue as they are.
ALTER TABLE reports
  ADD COLUMN status text NOT NULL DEFAULT 'open'
    CHECK (status IN ('open', 'ignored', 'dismissed', 'confirmed')),
  ADD COLUMN resolved_at timestamptz,
  ADD COLUMN resolved_by text,
  ADD COLUMN resolution_note text CHECK (resolution_note IS NULL OR length(resolution_note) <= 500);
-- The queue lists links with open reports, most recently reported first.
CREATE INDEX reports_open_idx ON reports (code, created_at) WHERE status = 'open';

-- Down Migration
DROP INDEX IF EXISTS reports_open_idx;
ALTER TABLE reports DROP COLUMN IF EXISTS resolution_note, DROP COLUMN IF EXISTS resolved_by,
  DROP COLUMN IF EXISTS resolved_at, DROP COLUMN IF EXISTS status;
