-- Up Migration
-- Mass retargets (re-platforming, a domain move, a section rename): a rule planned as a dry run, approved by
-- an admin, applied in batches by one workflow (`retarget:{id}`), undoable by an undo run.
CREATE TABLE retarget_runs (
  id            text PRIMARY KEY,
  kind          text NOT NULL CHECK (kind IN ('retarget', 'undo')),
  undo_of       text REFERENCES retarget_runs (id),
  -- The rule as given ({type: prefix|regex|csv, ...}) and which links it may touch.
  rule          jsonb NOT NULL,
  scope         jsonb NOT NULL DEFAULT '{}',
  status        text NOT NULL DEFAULT 'planning'
                CHECK (status IN ('planning', 'planned', 'running', 'paused', 'cancelled', 'finished', 'failed')),
  workflow_id   text NOT NULL UNIQUE,
  requested_by  text NOT NULL,
  approved_by   text,
  -- Counts, the sample of the dry run, progress, errors.
  report        jsonb NOT NULL DEFAULT '{}',
  created_at    timestamptz NOT NULL DEFAULT now(),
  approved_at   timestamptz,
  finished_at   timestamptz,
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX retarget_runs_created_idx ON retarget_runs (created_at DESC);
-- At most one undo of a run that is not cancelled or failed.
CREATE UNIQUE INDEX retarget_runs_one_undo ON retarget_runs (undo_of)
  WHERE undo_of IS NOT NULL AND status NOT IN ('cancelled', 'failed');

-- A CSV rule's pairs (old URL → new URL), matched exactly.
CREATE TABLE retarget_pairs (
  run_id   text NOT NULL REFERENCES retarget_runs (id),
  old_url  text NOT NULL,
  new_url  text NOT NULL
);
CREATE UNIQUE INDEX retarget_pairs_old_idx ON retarget_pairs (run_id, md5(old_url));

-- The plan, then what happened: one row per link the rule matches. Applying changes a link only while its
-- target is still `before_url`; the audit log keeps every change with its previous target too.
CREATE TABLE retarget_changes (
  run_id         text NOT NULL REFERENCES retarget_runs (id),
  code           text COLLATE "C" NOT NULL,
  before_url     text NOT NULL,
  after_url      text NOT NULL,
  state          text NOT NULL CHECK (state IN ('planned', 'invalid', 'applied', 'skipped')),
  problem        text,
  safety         text CHECK (safety IN ('unknown', 'clean', 'warn', 'blocked')),
  safety_reason  text,
  bitly_synced   boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_id, code)
);
-- No index on state: applying walks the plan by code (the primary key) with a cursor, and an index on a
-- column every applied change rewrites would make each of those updates touch it too.

-- Down Migration
DROP TABLE IF EXISTS retarget_changes, retarget_pairs, retarget_runs;
