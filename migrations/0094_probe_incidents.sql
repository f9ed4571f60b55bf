-- Up Migration
-- The black-box prober's incidents (lib/prober, docs/OPERATIONS.md "The prober"): an incident opens when a probe
-- through the public short domain fails or answers other than Postgres says it must, and closes when a whole
-- probe passes again. At most one is open at a time.
CREATE TABLE probe_incidents (
  id              bigserial PRIMARY KEY,
  opened_at       timestamptz NOT NULL DEFAULT now(),
  closed_at       timestamptz,
  last_failed_at  timestamptz NOT NULL DEFAULT now(),
  -- Probes (one code each) that failed while it was open: answered wrongly, or not answered at all.
  mismatches      integer NOT NULL DEFAULT 0,
  errors          integer NOT NULL DEFAULT 0,
  -- The first and the latest failure: { "code", "result", "expected", "actual" } (never a body).
  first_failure   jsonb NOT NULL,
  last_failure    jsonb NOT NULL,
  CHECK (closed_at IS NULL OR closed_at >= opened_at)
);
CREATE UNIQUE INDEX probe_incidents_one_open ON probe_incidents ((true)) WHERE closed_at IS NULL;
CREATE INDEX probe_incidents_opened_idx ON probe_incidents (opened_at DESC);

-- Down Migration
DROP TABLE IF EXISTS probe_incidents;
