-- Up Migration
-- The prober asks every short domain (ADR 0073): each domain's incident opens and closes on its own probes, so an
-- incident names its domain ('' for the default short domain, the host name for another, as links.domain), and
-- at most one is open per domain. Existing incidents were the default domain's.
ALTER TABLE probe_incidents ADD COLUMN domain text COLLATE "C" NOT NULL DEFAULT '';
CREATE UNIQUE INDEX probe_incidents_one_open_per_domain ON probe_incidents (domain) WHERE closed_at IS NULL;
DROP INDEX probe_incidents_one_open;

-- Down Migration
DELETE FROM probe_incidents WHERE domain <> '';
CREATE UNIQUE INDEX probe_incidents_one_open ON probe_incidents ((true)) WHERE closed_at IS NULL;
DROP INDEX probe_incidents_one_open_per_domain;
ALTER TABLE probe_incidents DROP COLUMN domain;
