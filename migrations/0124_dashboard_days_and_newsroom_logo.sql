-- Up Migration
-- The newsroom dashboard (ADR 0079): readers' clicks (human and QR, as stats count `clicks`) per link and UTC
-- day, so a window of days is read from one row per clicked link and day instead of click_counts' rows per hour,
-- kind, country and referrer. Kept like link_click_totals (migration 0121): statement triggers on click_counts
-- with transition tables, one grouped upsert per statement, so every writer (the click flush, an escrow restore,
-- a test's seed) moves it without knowing it exists. The key leads with the day: a window is one range of it.
CREATE TABLE click_days (
  day     date NOT NULL,
  code    text COLLATE "C" NOT NULL,
  clicks  bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (day, code)
);

INSERT INTO click_days (day, code, clicks)
SELECT (hour AT TIME ZONE 'UTC')::date, code, sum(clicks)
FROM click_counts WHERE kind IN ('human', 'qr') GROUP BY 1, 2;

CREATE FUNCTION click_days_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO click_days AS t (day, code, clicks)
  SELECT (hour AT TIME ZONE 'UTC')::date, code, sum(clicks)
  FROM inserted_rows WHERE kind IN ('human', 'qr') GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (day, code) DO UPDATE SET clicks = t.clicks + EXCLUDED.clicks;
  RETURN NULL;
END $$;

CREATE FUNCTION click_days_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO click_days AS t (day, code, clicks)
  SELECT (n.hour AT TIME ZONE 'UTC')::date, n.code, sum(n.clicks - o.clicks)
  FROM updated_new AS n
  JOIN updated_old AS o USING (code, hour, kind, country, referrer_host)
  WHERE n.kind IN ('human', 'qr')
  GROUP BY 1, 2 HAVING sum(n.clicks - o.clicks) <> 0 ORDER BY 1, 2
  ON CONFLICT (day, code) DO UPDATE SET clicks = t.clicks + EXCLUDED.clicks;
  RETURN NULL;
END $$;

CREATE FUNCTION click_days_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE click_days AS t SET clicks = t.clicks - d.clicks
  FROM (SELECT (hour AT TIME ZONE 'UTC')::date AS day, code, sum(clicks) AS clicks
        FROM deleted_rows WHERE kind IN ('human', 'qr') GROUP BY 1, 2) AS d
  WHERE t.day = d.day AND t.code = d.code;
  RETURN NULL;
END $$;

CREATE TRIGGER click_counts_days_insert AFTER INSERT ON click_counts
  REFERENCING NEW TABLE AS inserted_rows FOR EACH STATEMENT EXECUTE FUNCTION click_days_inserted();
CREATE TRIGGER click_counts_days_update AFTER UPDATE ON click_counts
  REFERENCING OLD TABLE AS updated_old NEW TABLE AS updated_new
  FOR EACH STATEMENT EXECUTE FUNCTION click_days_updated();
CREATE TRIGGER click_counts_days_delete AFTER DELETE ON click_counts
  REFERENCING OLD TABLE AS deleted_rows FOR EACH STATEMENT EXECUTE FUNCTION click_days_deleted();

-- Bitly's clicks of every link per day for the dashboard's windows: a range of days of one vendor, read from the
-- index alone.
CREATE INDEX vendor_daily_clicks_day_idx ON vendor_daily_clicks (vendor, day) INCLUDE (clicks);

-- The newsroom's logo for print QR codes: one row at most (an admin uploads it on the settings page), PNG or SVG
-- as the per-code upload takes them, at most 256 KiB.
CREATE TABLE newsroom_logo (
  singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  content_type  text NOT NULL CHECK (content_type IN ('image/png', 'image/svg+xml')),
  bytes         bytea NOT NULL CHECK (octet_length(bytes) BETWEEN 1 AND 262144),
  uploaded_by   text NOT NULL,
  uploaded_at   timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE IF EXISTS newsroom_logo;
DROP INDEX IF EXISTS vendor_daily_clicks_day_idx;
DROP TRIGGER IF EXISTS click_counts_days_delete ON click_counts;
DROP TRIGGER IF EXISTS click_counts_days_update ON click_counts;
DROP TRIGGER IF EXISTS click_counts_days_insert ON click_counts;
DROP FUNCTION IF EXISTS click_days_deleted();
DROP FUNCTION IF EXISTS click_days_updated();
DROP FUNCTION IF EXISTS click_days_inserted();
DROP TABLE IF EXISTS click_days;
