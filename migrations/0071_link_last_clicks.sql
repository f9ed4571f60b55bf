-- Up Migration
-- When each link was last clicked (to within LAST_CLICK_PRECISION_MINUTES), moved out of `links` into a table
-- of its own (ADR 0026). Every click flush moved links.last_clicked_at for the codes it carried: an indexed
-- column, so each move was a non-HOT update of a wide row that inserts into every index of `links`, its trigram
-- GIN indexes included. Measured with 100,000 links and flushes of ~36,000 aggregates (bench/redirect's
-- Postgres-path load): 15.5 s of Postgres for the first such flush, 1.3 s for the eighth, against ~0.35 s when
-- the flush moved nothing. Here a move is an upsert of a two-column row with two B-tree indexes.
-- No foreign key: links are never deleted (a deleted code keeps its row), and the re-scan walk joins links.
CREATE TABLE link_last_clicks (
  code            text COLLATE "C" PRIMARY KEY,
  last_clicked_at timestamptz NOT NULL
);
-- The safety re-scan walks links clicked most recently first (lib/stores/link_lifecycle_store.ts).
CREATE INDEX link_last_clicks_recent_idx ON link_last_clicks (last_clicked_at DESC, code);
INSERT INTO link_last_clicks (code, last_clicked_at)
  SELECT code, last_clicked_at FROM links WHERE last_clicked_at IS NOT NULL;
DROP INDEX IF EXISTS links_last_clicked_idx;
ALTER TABLE links DROP COLUMN last_clicked_at;

-- Down Migration
ALTER TABLE links ADD COLUMN last_clicked_at timestamptz;
UPDATE links AS l SET last_clicked_at = c.last_clicked_at FROM link_last_clicks AS c WHERE c.code = l.code;
CREATE INDEX links_last_clicked_idx ON links (last_clicked_at DESC NULLS LAST);
DROP TABLE IF EXISTS link_last_clicks;
