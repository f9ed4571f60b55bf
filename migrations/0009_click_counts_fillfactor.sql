-- Up Migration
-- Every click flush adds to rows that already exist (the same code, hour, kind, country and referrer as the
-- flush before): an update of `clicks` only, an unindexed column, so it can be HOT (in place, no index
-- touched) when the page has room. fillfactor 70 leaves that room. Measured with 100,000 links and 10,000
-- aggregates per flush (the LRU-hit load of bench/redirect): 170-274 ms of Postgres per flush against
-- 207-380 ms at the default 100.
-- Applies to pages written from now on; `VACUUM FULL click_counts` (an exclusive lock) repacks older ones.
ALTER TABLE click_counts SET (fillfactor = 70);

-- Down Migration
ALTER TABLE click_counts RESET (fillfactor);
