-- Up Migration
-- Who answers each short domain (ADR 0073): Bitly or our own front, since when, and which run switched it, one row
-- per stored domain ('' for the default short domain, the host name for another, as links.domain). The default's
-- row is the former `settings.active_front`, moved unchanged; a domain without a row is in-house, as a deployment
-- without the setting always was.
CREATE TABLE short_domain_fronts (
  domain       text COLLATE "C" PRIMARY KEY,
  active       text NOT NULL CHECK (active IN ('bitly', 'inhouse')),
  since        timestamptz,
  workflow_id  text,
  updated_at   timestamptz NOT NULL DEFAULT now()
);

INSERT INTO short_domain_fronts (domain, active, since, workflow_id)
SELECT '',
       CASE WHEN value->>'active' = 'bitly' THEN 'bitly' ELSE 'inhouse' END,
       (value->>'since')::timestamptz,
       value->>'workflowId'
FROM settings WHERE key = 'active_front';

DELETE FROM settings WHERE key = 'active_front';

-- Down Migration
INSERT INTO settings (key, value)
SELECT 'active_front', jsonb_strip_nulls(jsonb_build_object('active', active, 'since', since, 'workflowId', workflow_id))
FROM short_domain_fronts WHERE domain = ''
ON CONFLICT (key) DO NOTHING;
DROP TABLE short_domain_fronts;
