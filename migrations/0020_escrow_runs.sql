-- Up Migration
-- Escrow exports and static snapshots: one row per run, scheduled or by hand, with where it wrote and
-- what its manifest says. The exports themselves live on disk (ESCROW_DIR, SNAPSHOT_DIR), outside the database
-- they protect; this table only lets the operations page say how the last runs went.
CREATE TABLE escrow_runs (
  id           bigserial PRIMARY KEY,
  kind         text NOT NULL CHECK (kind IN ('export', 'snapshot')),
  workflow_id  text,
  directory    text NOT NULL,
  status       text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'succeeded', 'failed')),
  summary      jsonb NOT NULL DEFAULT '{}',
  error        text,
  started_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
CREATE INDEX escrow_runs_kind_idx ON escrow_runs (kind, started_at DESC);

-- Down Migration
DROP TABLE IF EXISTS escrow_runs;
