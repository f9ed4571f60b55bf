-- Up Migration
-- What the domain watch last read about the short domain and the app host (lib/domains): one row per name and
-- fact. The worker writes it; the web process's operations page and both processes' /metrics read it.
CREATE TABLE domain_watch_facts (
  -- A registered domain (registration, dnssec, lock) or a host name (certificate, reputation): lower case, ASCII.
  subject     text NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 253),
  fact        text NOT NULL CHECK (fact IN ('registration', 'certificate', 'reputation', 'dnssec', 'lock')),
  -- The fact as last read: true fine, false needs someone; null when the source does not show it.
  ok          boolean,
  -- When the registration or the certificate runs out (null for the other facts, or when not shown).
  expires_at  timestamptz,
  -- What was read: statuses, issuer, names, threats… (no secrets, never a response body).
  detail      jsonb NOT NULL DEFAULT '{}',
  -- Why the last attempt could not read the fact (null when it could); the fact as last read stays.
  error       text CHECK (error IS NULL OR char_length(error) <= 500),
  -- The last attempt that read the fact, and the last attempt at all.
  read_at     timestamptz,
  checked_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (subject, fact)
);

-- Down Migration
DROP TABLE IF EXISTS domain_watch_facts;
