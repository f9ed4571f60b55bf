-- Up Migration
-- Archive backfill from WordPress (integrations/wordpress/CONTRACT.md §1): every batch the plugin sends is
-- decided and written here, per post, before Lifeline answers 202, so a batch sent again (a retry, a resumed
-- run) gets the same answers and changes nothing, and the run's workflow (`backfill:{site}:{run}`) finds
-- what is left to propagate (serving store, Bitly) after any crash.
CREATE TABLE backfill_runs (
  site            text NOT NULL,
  run_id          text NOT NULL,
  workflow_id     text NOT NULL,
  status          text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished')),
  -- How many posts the plugin says the run covers (fixed when it started).
  total           integer NOT NULL DEFAULT 0 CHECK (total >= 0),
  rest_url        text,
  -- The highest batch number received, and whether the batch marked final was.
  last_batch      integer NOT NULL DEFAULT 0,
  final_received  boolean NOT NULL DEFAULT false,
  started_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz,
  PRIMARY KEY (site, run_id)
);
CREATE INDEX backfill_runs_started_idx ON backfill_runs (started_at DESC);

-- One row per post of a run: the outcome answered (minted, kept, adopted, or a refusal) and the code.
-- `propagated` is false while a new link still has to reach the serving store and its sync workflow.
CREATE TABLE backfill_posts (
  site         text NOT NULL,
  run_id       text NOT NULL,
  post_id      bigint NOT NULL,
  batch        integer NOT NULL,
  outcome      text NOT NULL,
  code         text COLLATE "C",
  detail       text,
  propagated   boolean NOT NULL DEFAULT true,
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site, run_id, post_id),
  FOREIGN KEY (site, run_id) REFERENCES backfill_runs (site, run_id)
);
CREATE INDEX backfill_posts_unpropagated_idx ON backfill_posts (site, run_id, post_id) WHERE NOT propagated;

-- Links imported from Bitly and bound to no post, by destination: a backfilled post whose permalink one of
-- them points to adopts it (its back-half becomes the post's code). md5: a permalink may be 2 KB.
CREATE INDEX links_unbound_import_target_idx ON links (md5(target_url))
  WHERE site IS NULL AND origin = 'import' AND deleted_at IS NULL;

-- Down Migration
DROP INDEX IF EXISTS links_unbound_import_target_idx;
DROP TABLE IF EXISTS backfill_posts, backfill_runs;
