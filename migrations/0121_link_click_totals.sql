-- Up Migration
-- Each link's total of readers' clicks (human and QR, as stats count `clicks`), for the links list's clicks
-- column and its sort (ADR 0087). Kept apart from `links` (wide and heavily indexed, as link_last_clicks is) and
-- kept by statement triggers on click_counts, so every writer (the click flush, an escrow restore, a test's
-- seed) moves it: one grouped upsert per statement, from its transition tables.
CREATE TABLE link_click_totals (
  code    text COLLATE "C" PRIMARY KEY,
  clicks  bigint NOT NULL DEFAULT 0
);
-- The list sorted by clicks walks this index (most first, the code breaking ties as every list order does).
CREATE INDEX link_click_totals_clicks_idx ON link_click_totals (clicks DESC, code DESC);

INSERT INTO link_click_totals (code, clicks)
SELECT code, sum(clicks) FROM click_counts WHERE kind IN ('human', 'qr') GROUP BY code;

CREATE FUNCTION link_click_totals_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO link_click_totals AS t (code, clicks)
  SELECT code, sum(clicks) FROM inserted_rows WHERE kind IN ('human', 'qr') GROUP BY code ORDER BY code
  ON CONFLICT (code) DO UPDATE SET clicks = t.clicks + EXCLUDED.clicks;
  RETURN NULL;
END $$;

CREATE FUNCTION link_click_totals_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO link_click_totals AS t (code, clicks)
  SELECT n.code, sum(n.clicks - o.clicks)
  FROM updated_new AS n
  JOIN updated_old AS o USING (code, hour, kind, country, referrer_host)
  WHERE n.kind IN ('human', 'qr')
  GROUP BY n.code HAVING sum(n.clicks - o.clicks) <> 0 ORDER BY n.code
  ON CONFLICT (code) DO UPDATE SET clicks = t.clicks + EXCLUDED.clicks;
  RETURN NULL;
END $$;

CREATE FUNCTION link_click_totals_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE link_click_totals AS t SET clicks = t.clicks - d.clicks
  FROM (SELECT code, sum(clicks) AS clicks FROM deleted_rows WHERE kind IN ('human', 'qr') GROUP BY code) AS d
  WHERE t.code = d.code;
  RETURN NULL;
END $$;

CREATE TRIGGER click_counts_totals_insert AFTER INSERT ON click_counts
  REFERENCING NEW TABLE AS inserted_rows FOR EACH STATEMENT EXECUTE FUNCTION link_click_totals_inserted();
CREATE TRIGGER click_counts_totals_update AFTER UPDATE ON click_counts
  REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new
  FOR EACH STATEMENT EXECUTE FUNCTION link_click_totals_updated();
CREATE TRIGGER click_counts_totals_delete AFTER DELETE ON click_counts
  REFERENCING OLD TABLE AS deleted_rows FOR EACH STATEMENT EXECUTE FUNCTION link_click_totals_deleted();

-- Down Migration
DROP TRIGGER IF EXISTS click_counts_totals_delete ON click_counts;
DROP TRIGGER IF EXISTS click_counts_totals_update ON click_counts;
DROP TRIGGER IF EXISTS click_counts_totals_insert ON click_counts;
DROP FUNCTION IF EXISTS link_click_totals_deleted();
DROP FUNCTION IF EXISTS link_click_totals_updated();
DROP FUNCTION IF EXISTS link_click_totals_inserted();
DROP TABLE IF EXISTS link_click_totals;
