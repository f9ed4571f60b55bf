-- Up Migration
-- Re-scans write a check time on every link they read (safety_checked_at), in batches of 500; expiry and
-- verdict changes touch a few columns. Measured on this schema (20,000 links, 40 batches of 500 updates of
-- safety_checked_at, bench/rescan_throughput.ts and the note in docs/OPERATIONS.md):
--   * GIN "fast update" makes every non-HOT update append the row's trigrams to the index's pending list,
--     and the backend that overflows the list (4 MB) flushes it: batches went from ~15 ms to 3-13 s each,
--     208 s in all. With fastupdate off the same 40 batches took 3.0 s (0.5 s with no trigram index at all).
--     Lookups (substring search in the UI) do not use the pending list's speed-up; they only gain from off.
--   * fillfactor 80 leaves room on each page so an update of unindexed columns can be HOT (in place, no
--     index touched at all): 19-26 ms per batch against 31-66 ms at 100 (200,000 links).
ALTER INDEX links_url_trgm_idx SET (fastupdate = off);
ALTER INDEX links_code_trgm_idx SET (fastupdate = off);
ALTER INDEX links_tags_idx SET (fastupdate = off);
SELECT gin_clean_pending_list('links_url_trgm_idx'::regclass);
SELECT gin_clean_pending_list('links_code_trgm_idx'::regclass);
SELECT gin_clean_pending_list('links_tags_idx'::regclass);
-- Applies to pages written from now on; `VACUUM FULL links` (an exclusive lock) repacks older ones.
ALTER TABLE links SET (fillfactor = 80);

-- One change of the active front (failover, failback, drill) at a time: a second running row is refused
-- by this index, atomically, which the API turns into a 409.
CREATE UNIQUE INDEX ops_runs_one_front_change ON ops_runs ((true))
  WHERE status = 'running' AND kind IN ('failover', 'failback', 'drill');

-- What a reconciliation run found, one row per (run, side, code): every code seen on the vendor (drift
-- NULL when it agrees with Postgres), and every drift with whether it was repaired. The run's report is
-- counted from here at the end, so a crash and a retried page can neither lose nor double a count.
-- Scratch data of running runs (deleted when a run ends): unlogged, nothing to replicate or recover.
CREATE UNLOGGED TABLE reconcile_marks (
  run_id    text NOT NULL,
  side      text NOT NULL CHECK (side IN ('bitly', 'serving', 'expiry')),
  code      text COLLATE "C" NOT NULL,
  drift     text CHECK (drift IN ('missing', 'stale', 'extra', 'collision', 'unimportable')),
  repaired  boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_id, side, code)
);

-- Down Migration
DROP TABLE IF EXISTS reconcile_marks;
DROP INDEX IF EXISTS ops_runs_one_front_change;
ALTER TABLE links RESET (fillfactor);
ALTER INDEX links_tags_idx RESET (fastupdate);
ALTER INDEX links_code_trgm_idx RESET (fastupdate);
ALTER INDEX links_url_trgm_idx RESET (fastupdate);
