-- Up Migration
-- Bulk changes an editor asks for in the links list or through POST /api/v1/links/bulk (lib/links/bulk_change.ts,
-- ADR 0086): add or remove a tag, set the expiry, block, delete. The run is recorded first, with the selection
-- as asked (codes, or a list filter); its workflow (`bulk:{id}`) copies the matching codes into
-- bulk_change_links once, then applies them in batches (each a transaction: the links, one audit entry per link,
-- the sync queue), so a large selection never holds a request and shows its progress here.
CREATE TABLE bulk_changes (
  id                     text PRIMARY KEY,
  action                 text NOT NULL CHECK (action IN ('tag_add', 'tag_remove', 'expire', 'block', 'delete')),
  -- {tag} | {expiresAt} | {} ; the reason is its own column (it goes into every audit entry).
  params                 jsonb NOT NULL DEFAULT '{}',
  -- {codes: [...]} or {filter: {...}} (the list's filters, as lib/links/list_links.ts reads them).
  selection              jsonb NOT NULL,
  reason                 text,
  status                 text NOT NULL DEFAULT 'selecting'
                         CHECK (status IN ('selecting', 'running', 'finished', 'failed')),
  total                  integer NOT NULL DEFAULT 0,
  applied                integer NOT NULL DEFAULT 0,
  skipped                integer NOT NULL DEFAULT 0,
  requested_by           text NOT NULL,
  -- An administrator's run may change WordPress articles' links; an editor's skips them (post_link_rules.ts).
  may_manage_post_links  boolean NOT NULL DEFAULT false,
  workflow_id            text NOT NULL UNIQUE,
  created_at             timestamptz NOT NULL DEFAULT now(),
  finished_at            timestamptz,
  updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bulk_changes_created_idx ON bulk_changes (created_at DESC);

-- The selection, fixed when the run starts (links created later are not swept in), and what became of each.
CREATE TABLE bulk_change_links (
  run_id   text NOT NULL REFERENCES bulk_changes (id) ON DELETE CASCADE,
  code     text COLLATE "C" NOT NULL,
  state    text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'applied', 'skipped')),
  problem  text,
  PRIMARY KEY (run_id, code)
);

-- Down Migration
DROP TABLE IF EXISTS bulk_change_links;
DROP TABLE IF EXISTS bulk_changes;
