-- Up Migration
-- The whole data model of DESIGN.md. Postgres is authoritative; every other copy (serving store,
-- in-process caches, Bitly) is a replica that can be rebuilt from these tables.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- One row per short code, forever: a deleted code keeps its row (status 'gone', deleted_at set) so the
-- PRIMARY KEY guarantees it is never minted again.
CREATE TABLE links (
  code              text COLLATE "C" PRIMARY KEY,
  target_url        text NOT NULL CHECK (octet_length(target_url) <= 2048),
  status            text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'active', 'expired', 'gone', 'blocked')),
  safety            text NOT NULL DEFAULT 'unknown'
                    CHECK (safety IN ('unknown', 'clean', 'warn', 'blocked')),
  safety_reason     text,
  safety_checked_at timestamptz,
  origin            text NOT NULL CHECK (origin IN ('api', 'ui', 'wordpress', 'import')),
  site              text,
  post_id           bigint,
  title             text,
  owner             text NOT NULL,
  expires_at        timestamptz,
  expired_url       text CHECK (expired_url IS NULL OR octet_length(expired_url) <= 2048),
  redirect_status   smallint CHECK (redirect_status IS NULL OR redirect_status IN (301, 302, 307, 308)),
  tags              text[] NOT NULL DEFAULT '{}',
  -- Hash of (url, options) for "same owner + same url + same options" dedupe on create.
  dedupe_key        text,
  -- occurredAt of the newest WordPress event applied, so an out-of-order delivery cannot undo a newer one.
  source_version    timestamptz,
  last_clicked_at   timestamptz,
  deleted_at        timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  version           integer NOT NULL DEFAULT 1,
  CHECK ((site IS NULL) = (post_id IS NULL))
);
-- One canonical link per article.
CREATE UNIQUE INDEX links_site_post_key ON links (site, post_id) WHERE site IS NOT NULL;
CREATE INDEX links_dedupe_idx ON links (owner, dedupe_key) WHERE dedupe_key IS NOT NULL AND deleted_at IS NULL;
-- Listing newest first with a stable (created_at, code) cursor.
CREATE INDEX links_created_idx ON links (created_at DESC, code DESC);
CREATE INDEX links_status_idx ON links (status, created_at DESC);
CREATE INDEX links_expires_idx ON links (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX links_last_clicked_idx ON links (last_clicked_at DESC NULLS LAST);
CREATE INDEX links_tags_idx ON links USING gin (tags);
-- Substring search (q) over code and url.
CREATE INDEX links_url_trgm_idx ON links USING gin (target_url gin_trgm_ops);
CREATE INDEX links_code_trgm_idx ON links USING gin (code gin_trgm_ops);

-- The vendor's copy of a link is a replica, never the truth.
CREATE TABLE vendor_links (
  code        text COLLATE "C" NOT NULL REFERENCES links (code),
  vendor      text NOT NULL CHECK (vendor IN ('bitly', 'inhouse')),
  vendor_id   text,
  state       text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'synced', 'failed', 'collision')),
  synced_url  text,
  last_error  text,
  attempts    integer NOT NULL DEFAULT 0,
  synced_at   timestamptz,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (code, vendor)
);
CREATE INDEX vendor_links_state_idx ON vendor_links (vendor, state);

-- Append-only history of every change to a link.
CREATE TABLE audit_log (
  id          bigserial PRIMARY KEY,
  code        text COLLATE "C",
  actor       text NOT NULL,
  action      text NOT NULL,
  before      jsonb,
  after       jsonb,
  reason      text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_code_idx ON audit_log (code, id DESC);
CREATE INDEX audit_log_created_idx ON audit_log (created_at DESC);

-- Clicks aggregated per hour; the hot path never writes a row per click.
CREATE TABLE click_counts (
  code           text COLLATE "C" NOT NULL,
  hour           timestamptz NOT NULL,
  kind           text NOT NULL CHECK (kind IN ('human', 'bot', 'preview', 'qr', 'head')),
  country        text NOT NULL DEFAULT '',
  referrer_host  text NOT NULL DEFAULT '',
  clicks         bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (code, hour, kind, country, referrer_host)
);
CREATE INDEX click_counts_hour_idx ON click_counts (hour);

CREATE TABLE users (
  id             bigserial PRIMARY KEY,
  email          text NOT NULL UNIQUE CHECK (email = lower(email)),
  name           text,
  password_hash  text NOT NULL,
  role           text NOT NULL DEFAULT 'editor' CHECK (role IN ('editor', 'admin')),
  disabled_at    timestamptz,
  last_login_at  timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Session ids are stored as SHA-256 hashes; the cookie carries the only copy of the secret.
CREATE TABLE sessions (
  id_hash       text PRIMARY KEY,
  user_id       bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  csrf_token    text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  user_agent    text,
  ip            text
);
CREATE INDEX sessions_user_idx ON sessions (user_id);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);

-- API keys are stored as SHA-256 hashes (they are high-entropy secrets); prefix is shown in lists.
CREATE TABLE api_keys (
  id            bigserial PRIMARY KEY,
  name          text NOT NULL,
  prefix        text NOT NULL,
  key_hash      text NOT NULL UNIQUE,
  scopes        text[] NOT NULL CHECK (scopes <@ ARRAY['links:read', 'links:write', 'admin']::text[]),
  created_by    text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz
);

-- Idempotency-Key replay: the first response for (owner, key) is kept and replayed.
CREATE TABLE idempotency_keys (
  owner            text NOT NULL,
  key              text NOT NULL,
  request_hash     text NOT NULL,
  response_status  smallint,
  response_body    jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- User reports against a link; reporter is a salted hash (of IP and user agent), one report each.
CREATE TABLE reports (
  code           text COLLATE "C" NOT NULL REFERENCES links (code),
  reporter_hash  text NOT NULL,
  reason         text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (code, reporter_hash)
);

-- Local blocklist, editable by admins: a host (and its subdomains) or an exact URL prefix.
CREATE TABLE blocklist (
  pattern     text PRIMARY KEY,
  kind        text NOT NULL DEFAULT 'host' CHECK (kind IN ('host', 'url_prefix')),
  reason      text,
  created_by  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Deployment-wide settings: the active front, generated secrets, last drill and reconciliation.
CREATE TABLE settings (
  key         text PRIMARY KEY,
  value       jsonb NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO settings (key, value) VALUES ('active_front', '{"active": "inhouse", "since": null}');

-- Every accepted WordPress delivery: a replay of the same id changes nothing.
CREATE TABLE webhook_deliveries (
  delivery_id   text PRIMARY KEY,
  site          text NOT NULL,
  post_id       bigint NOT NULL,
  event         text NOT NULL,
  occurred_at   timestamptz NOT NULL,
  workflow_id   text NOT NULL,
  received_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_post_idx ON webhook_deliveries (site, post_id, occurred_at DESC);

-- Operations runs (reconciliation, re-scan, import, failover, failback, drill) and their reports.
CREATE TABLE ops_runs (
  id            bigserial PRIMARY KEY,
  kind          text NOT NULL CHECK (kind IN ('reconcile', 'rescan', 'import', 'failover', 'failback', 'drill')),
  workflow_id   text NOT NULL,
  status        text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled')),
  report        jsonb NOT NULL DEFAULT '{}',
  started_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz
);
CREATE UNIQUE INDEX ops_runs_workflow_idx ON ops_runs (workflow_id);
CREATE INDEX ops_runs_kind_idx ON ops_runs (kind, started_at DESC);

-- Down Migration
DROP TABLE IF EXISTS ops_runs, webhook_deliveries, settings, blocklist, reports, idempotency_keys, api_keys,
  sessions, users, click_counts, audit_log, vendor_links, links;
