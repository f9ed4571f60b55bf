-- Up Migration
-- Clicks a vendor counted for one of our links, per UTC day, as the vendor reported them (Bitly's
-- GET /v4/bitlinks/{bitlink}/clicks?unit=day), pulled by pullBitlyClicksWorkflow and shown beside our own
-- counts. A pull rewrites the days it asked for (a vendor may revise recent days); fetched_at says when.
CREATE TABLE vendor_daily_clicks (
  code        text COLLATE "C" NOT NULL REFERENCES links (code),
  vendor      text NOT NULL CHECK (vendor IN ('bitly')),
  day         date NOT NULL,
  clicks      bigint NOT NULL CHECK (clicks >= 0),
  fetched_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (code, vendor, day)
);

-- Down Migration
DROP TABLE IF EXISTS vendor_daily_clicks;
