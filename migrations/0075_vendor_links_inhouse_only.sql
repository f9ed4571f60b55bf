-- Up Migration
-- An archive link kept in-house only (ARCHIVE_LINKS_IN_HOUSE): its Bitly row says so, so the sync never creates
-- it on Bitly and reconciliation does not count it missing there (docs/PUBLISHING.md, "Archive links in-house only").
ALTER TABLE vendor_links DROP CONSTRAINT IF EXISTS vendor_links_state_check;
ALTER TABLE vendor_links ADD CONSTRAINT vendor_links_state_check
  CHECK (state IN ('pending', 'synced', 'failed', 'collision', 'inhouse'));

-- Down Migration
-- Back to "never attempted": the next sync or reconciliation creates them on Bitly.
DELETE FROM vendor_links WHERE state = 'inhouse';
ALTER TABLE vendor_links DROP CONSTRAINT IF EXISTS vendor_links_state_check;
ALTER TABLE vendor_links ADD CONSTRAINT vendor_links_state_check
  CHECK (state IN ('pending', 'synced', 'failed', 'collision'));
