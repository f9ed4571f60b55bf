-- Up Migration
-- A link's routing rules (docs/adr/0080-routing-rules-on-the-link-row.md): an ordered JSON array of
-- {"kind": "language"|"device"|"country", "values": [...], "url": "..."}, first match wins, the link's
-- target_url answering everyone else. On the link row, beside the target, so the redirect's lookup reads one more
-- column (null for a link without rules) instead of joining a table, a change bumps `version` like any other
-- (the serving store's version guard and every cache already follow it), and escrow exports carry it with the
-- row. The shape of each rule is the link model's (lib/links/routing_rules.ts) and is checked again where a
-- record enters the resolver's LRU; the database holds the bounds a writer around the model cannot exceed.
ALTER TABLE links
  ADD COLUMN routing_rules jsonb CHECK (
    routing_rules IS NULL
    OR (jsonb_typeof(routing_rules) = 'array'
        AND jsonb_array_length(routing_rules) BETWEEN 1 AND 8
        AND octet_length(routing_rules::text) <= 24576)
  );

-- Down Migration
ALTER TABLE links DROP COLUMN IF EXISTS routing_rules;
