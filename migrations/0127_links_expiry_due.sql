-- Up Migration
-- The expiry sweeper (ADR 0091) reads live active links by expires_at: the due ones, oldest first, and the next
-- date to wake at. links_expires_idx holds every link with a date, the expired and deleted ones too, so on a
-- deployment with years of expired links both reads would walk past them all; this index holds only the links the
-- sweeper may still expire, and its first entry is the next due date.
CREATE INDEX links_expiry_due_idx ON links (expires_at, code)
  WHERE status = 'active' AND deleted_at IS NULL AND expires_at IS NOT NULL;

-- Down Migration
DROP INDEX IF EXISTS links_expiry_due_idx;
