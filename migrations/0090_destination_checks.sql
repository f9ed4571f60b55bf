-- Up Migration
-- What Lifeline last saw at each link's destination, what it kept of it, and what it did about a death.
-- One row per link that has been considered for checking; a retarget (a new target_url) resets the row.
CREATE TABLE destination_states (
  code             text COLLATE "C" PRIMARY KEY REFERENCES links (code) ON DELETE CASCADE,
  -- The target this row describes; a row whose url differs from links.target_url is stale and is reset.
  url              text NOT NULL CHECK (octet_length(url) <= 2048),
  -- Lower-case host of url (punycode), for politeness and per-host policies.
  host             text NOT NULL,
  -- The last check's outcome; null until the first check.
  outcome          text CHECK (outcome IN ('ok', 'moved', 'gone', 'soft-404', 'unreachable', 'parked')),
  -- What acting on it may rely on: a failed outcome becomes a verdict only after two failed checks at least a
  -- day apart ('suspect' in between). 'moved' is a permanent redirect to another URL, confirmed the same way.
  verdict          text NOT NULL DEFAULT 'unchecked'
                   CHECK (verdict IN ('unchecked', 'ok', 'suspect', 'dead', 'moved')),
  verdict_at       timestamptz,
  http_status      smallint,
  final_url        text CHECK (final_url IS NULL OR octet_length(final_url) <= 2048),
  -- The redirect chain followed (at most 5 hops): [{ "url", "status", "location" }].
  chain            jsonb NOT NULL DEFAULT '[]',
  -- TLS as seen on the final hop: { "protocol", "issuer", "validTo", "error" }; null for http.
  tls              jsonb,
  -- DNS/TLS/timeout error of the last check, as a short code and message (never a body).
  error            text CHECK (error IS NULL OR char_length(error) <= 500),
  -- Title of the final page (crawl on create), at most 300 characters.
  page_title       text CHECK (page_title IS NULL OR char_length(page_title) <= 300),
  checks           integer NOT NULL DEFAULT 0,
  -- Consecutive failed checks, and when the first of them ran (the two-check rule).
  failures         integer NOT NULL DEFAULT 0,
  first_failed_at  timestamptz,
  checked_at       timestamptz,
  next_check_at    timestamptz NOT NULL DEFAULT now(),
  -- The archived copy: a Save Page Now capture or the closest existing Wayback snapshot.
  archive_state    text NOT NULL DEFAULT 'none'
                   CHECK (archive_state IN ('none', 'requested', 'saved', 'found', 'missing', 'failed', 'skipped')),
  archive_url      text CHECK (archive_url IS NULL OR octet_length(archive_url) <= 2048),
  archive_at       timestamptz,
  archive_job_id   text,
  -- Acting on a death: the fallback currently applied (reversible), and a proposed retarget for 'moved'.
  fallback_since   timestamptz,
  proposed_url     text CHECK (proposed_url IS NULL OR octet_length(proposed_url) <= 2048),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX destination_states_due_idx ON destination_states (next_check_at);
CREATE INDEX destination_states_verdict_idx ON destination_states (verdict, verdict_at DESC) WHERE verdict <> 'ok';
CREATE INDEX destination_states_host_idx ON destination_states (host);

-- What to do when a link's destination dies: null defers to the host's policy, then to the default ('notify').
ALTER TABLE links
  ADD COLUMN dead_policy text CHECK (dead_policy IN ('notify', 'fallback', 'off'));

-- Per-host policy for dead destinations, set by an operator.
CREATE TABLE destination_host_policies (
  host        text PRIMARY KEY,
  dead_policy text NOT NULL CHECK (dead_policy IN ('notify', 'fallback', 'off')),
  updated_by  text NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE IF EXISTS destination_host_policies, destination_states;
ALTER TABLE links DROP COLUMN IF EXISTS dead_policy;
