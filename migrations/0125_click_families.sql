-- Up Migration
-- Readers' clicks (human and QR) by browser and OS family, per link and UTC day: the families the click buffer
-- works out from each User-Agent as it flushes (lib/clicks/agent_family.ts), never the agent itself, which is
-- stored nowhere. Written by the same statement as click_counts, under the same batch id.
CREATE TABLE click_families (
  code     text COLLATE "C" NOT NULL,
  day      date NOT NULL,
  browser  text NOT NULL CHECK (browser ~ '^[a-z]{1,16}$'),
  os       text NOT NULL CHECK (os ~ '^[a-z]{1,16}$'),
  clicks   bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (code, day, browser, os)
) WITH (fillfactor = 70);
-- The newsroom's totals over a window read every link's rows of those days.
CREATE INDEX click_families_day_idx ON click_families (day);

-- Down Migration
DROP TABLE IF EXISTS click_families;
