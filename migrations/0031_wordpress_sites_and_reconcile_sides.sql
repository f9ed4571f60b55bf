-- Up Migration
-- Where each WordPress site's signed listing lives (CONTRACT.md §5–6): the restUrl of the newest signed event
-- or backfill batch seen for the site. WordPress reconciliation reads it (WORDPRESS_REST_URLS overrides it).
CREATE TABLE wordpress_sites (
  site        text PRIMARY KEY,
  rest_url    text NOT NULL CHECK (octet_length(rest_url) <= 2048),
  -- When WordPress sent it (the event's occurredAt): an older event arriving late never replaces a newer URL.
  seen_at     timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Reconciliation gains a WordPress side (its marks are keyed `{site}:{postId}`), and Bitly strays: bitlinks we
-- made that hold none of our codes, found and archived.
ALTER TABLE reconcile_marks DROP CONSTRAINT IF EXISTS reconcile_marks_side_check;
ALTER TABLE reconcile_marks ADD CONSTRAINT reconcile_marks_side_check
  CHECK (side IN ('bitly', 'serving', 'expiry', 'wordpress'));
ALTER TABLE reconcile_marks DROP CONSTRAINT IF EXISTS reconcile_marks_drift_check;
ALTER TABLE reconcile_marks ADD CONSTRAINT reconcile_marks_drift_check
  CHECK (drift IN ('missing', 'stale', 'extra', 'collision', 'unimportable', 'stray', 'gone'));

-- Down Migration
DELETE FROM reconcile_marks WHERE side = 'wordpress' OR drift IN ('stray', 'gone');
ALTER TABLE reconcile_marks DROP CONSTRAINT IF EXISTS reconcile_marks_drift_check;
ALTER TABLE reconcile_marks ADD CONSTRAINT reconcile_marks_drift_check
  CHECK (drift IN ('missing', 'stale', 'extra', 'collision', 'unimportable'));
ALTER TABLE reconcile_marks DROP CONSTRAINT IF EXISTS reconcile_marks_side_check;
ALTER TABLE reconcile_marks ADD CONSTRAINT reconcile_marks_side_check CHECK (side IN ('bitly', 'serving', 'expiry'));
DROP TABLE IF EXISTS wordpress_sites;
