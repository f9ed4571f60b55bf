-- Up Migration
-- A post's identity (ADR 0057): the code travels with the post (its claim, `knownCode`), then its GUID, then its
-- permalink path, and only then its post ID. A fresh WordPress installation for a known site (export, import,
-- new IDs) switches the site into a migration mode until a complete reconciliation leaves nothing to review.
ALTER TABLE wordpress_sites
  ADD COLUMN installation_id text CHECK (installation_id ~ '^[A-Za-z0-9-]{16,64}$'),
  ADD COLUMN previous_installation_id text,
  ADD COLUMN installation_changed_at timestamptz,
  -- Set while the site is in migration mode (since when); null otherwise.
  ADD COLUMN migrating_since timestamptz,
  -- The end of the first complete reconciliation pass since the switch: resolving the last review ends the mode.
  ADD COLUMN migration_reconciled_at timestamptz;

-- A link whose post ID was taken by the post that claims another code keeps its site and target but no post
-- until its own post claims it (post IDs are positive; a detached link holds a negative number from here, so
-- the (site, post_id) key stays unique and no lookup by a real post ID finds it).
CREATE SEQUENCE detached_post_ids;

-- The WordPress GUID a post link was last seen with (not necessarily a URL): the second identity after the claim.
CREATE TABLE wordpress_post_guids (
  code  text COLLATE "C" PRIMARY KEY,
  site  text NOT NULL,
  guid  text NOT NULL CHECK (char_length(guid) <= 2000)
);
CREATE INDEX wordpress_post_guids_guid_idx ON wordpress_post_guids (site, md5(guid));

-- What identity matching could not decide on its own: an admin binds the code to a post, leaves it gone, or
-- keeps it as it is. One open item per (site, kind, post, code).
CREATE TABLE wordpress_reviews (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  site         text NOT NULL,
  kind         text NOT NULL
               CHECK (kind IN ('claim-conflict', 'foreign-claim', 'ambiguous', 'reused-post-id', 'unmatched-link')),
  post_id      bigint,
  code         text COLLATE "C",
  permalink    text CHECK (permalink IS NULL OR octet_length(permalink) <= 2048),
  candidates   text[] NOT NULL DEFAULT '{}',
  detail       text NOT NULL,
  status       text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
  resolution   text CHECK (resolution IN ('bind', 'gone', 'keep')),
  resolved_by  text,
  resolved_at  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX wordpress_reviews_open_key
  ON wordpress_reviews (site, kind, (COALESCE(post_id, 0)), (COALESCE(code, '')))
  WHERE status = 'open';
CREATE INDEX wordpress_reviews_site_idx ON wordpress_reviews (site, status, id);

-- The breaker on mass change: changes (retargets, gones) a WordPress path wanted beyond a site's budget wait
-- here for an admin's decision. `reconcile` holds belong to a waiting reconciliation (its workflow is signalled);
-- `events` holds collect what post events wanted beyond the hourly budget (one waiting hold per site).
CREATE TABLE wordpress_breaker_holds (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  site         text NOT NULL,
  source       text NOT NULL CHECK (source IN ('reconcile', 'events')),
  run_id       text,
  workflow_id  text,
  status       text NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'applied', 'discarded')),
  budget       integer NOT NULL,
  site_links   integer NOT NULL,
  decided_by   text,
  decided_at   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX wordpress_breaker_holds_one_events ON wordpress_breaker_holds (site)
  WHERE source = 'events' AND status = 'waiting';
CREATE INDEX wordpress_breaker_holds_waiting_idx ON wordpress_breaker_holds (status, id);

CREATE TABLE wordpress_breaker_changes (
  hold_id           bigint NOT NULL REFERENCES wordpress_breaker_holds (id),
  code              text COLLATE "C" NOT NULL,
  change            text NOT NULL CHECK (change IN ('retarget', 'gone')),
  post_id           bigint,
  before_url        text NOT NULL,
  after_url         text,
  before_status     text NOT NULL,
  expected_version  integer NOT NULL,
  state             text NOT NULL DEFAULT 'held' CHECK (state IN ('held', 'applied', 'skipped', 'discarded')),
  PRIMARY KEY (hold_id, code)
);

-- What the WordPress paths changed, per site and minute: the hourly part of the budget.
CREATE TABLE wordpress_breaker_spend (
  site      text NOT NULL,
  minute    timestamptz NOT NULL,
  changes   integer NOT NULL,
  PRIMARY KEY (site, minute)
);

-- Down Migration
DROP TABLE IF EXISTS wordpress_breaker_spend, wordpress_breaker_changes, wordpress_breaker_holds;
DROP TABLE IF EXISTS wordpress_reviews, wordpress_post_guids;
DROP SEQUENCE IF EXISTS detached_post_ids;
ALTER TABLE wordpress_sites
  DROP COLUMN IF EXISTS installation_id, DROP COLUMN IF EXISTS previous_installation_id,
  DROP COLUMN IF EXISTS installation_changed_at, DROP COLUMN IF EXISTS migrating_since,
  DROP COLUMN IF EXISTS migration_reconciled_at;
