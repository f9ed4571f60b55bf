-- Up Migration
-- Outgoing webhooks (lib/webhooks, ADR 0082): endpoints that subscribe to event types, the outbox of messages
-- written in the transaction of the change that caused them, and the delivery log. Not `webhook_deliveries`:
-- that table is the incoming WordPress deliveries' dedupe.
CREATE TABLE webhook_endpoints (
  id                    bigserial PRIMARY KEY,
  url                   text NOT NULL,
  description           text NOT NULL DEFAULT '',
  event_types           text[] NOT NULL CHECK (cardinality(event_types) > 0),
  enabled               boolean NOT NULL DEFAULT true,
  -- Why it was switched off when Lifeline did it (the receiver answered 410 Gone); null when a person did.
  disabled_reason       text,
  -- Standard Webhooks secrets (`whsec_<base64>`): needed to sign, so kept as they are; never logged, never
  -- returned after the answer that created them, never in an escrow export.
  secret                text NOT NULL,
  previous_secret       text,
  -- Until then the previous secret signs too (a rotation's grace); past it, only the current one.
  previous_secret_until timestamptz,
  secret_rotated_at     timestamptz,
  -- A 429's Retry-After holds every message of the endpoint until then.
  paused_until          timestamptz,
  created_by            text NOT NULL,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);

-- One row per (event, subscribed endpoint): the outbox and the delivery state at once. The body sent is made
-- from event_type, payload and created_at, so every attempt sends the same bytes under the same id.
CREATE TABLE webhook_messages (
  id               text PRIMARY KEY,
  endpoint_id      bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_type       text NOT NULL,
  payload          jsonb NOT NULL,
  -- Events that must go once per endpoint whoever writes them (the daily clicks summary of one day).
  dedupe_key       text,
  state            text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed', 'dead')),
  -- Attempts of the current round (a "send again" starts a new round); the log keeps every attempt.
  attempts         integer NOT NULL DEFAULT 0,
  round_started_at timestamptz NOT NULL DEFAULT now(),
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_status      smallint,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz
);
CREATE UNIQUE INDEX webhook_messages_dedupe ON webhook_messages (endpoint_id, dedupe_key) WHERE dedupe_key IS NOT NULL;
CREATE INDEX webhook_messages_due ON webhook_messages (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_messages_endpoint ON webhook_messages (endpoint_id, created_at DESC);
CREATE INDEX webhook_messages_finished ON webhook_messages (finished_at) WHERE finished_at IS NOT NULL;

-- The delivery log: one row per request sent (or refused before sending), kept WEBHOOK_LOG_RETENTION.
CREATE TABLE webhook_attempts (
  id            bigserial PRIMARY KEY,
  message_id    text NOT NULL REFERENCES webhook_messages (id) ON DELETE CASCADE,
  attempted_at  timestamptz NOT NULL DEFAULT now(),
  outcome       text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed', 'dead')),
  status_code   smallint,
  latency_ms    integer NOT NULL,
  -- At most 1 KiB of what the receiver answered (never what we sent: the body is in the message).
  response_body text,
  error         text
);
CREATE INDEX webhook_attempts_message ON webhook_attempts (message_id, attempted_at DESC);
CREATE INDEX webhook_attempts_at ON webhook_attempts (attempted_at);

-- Down Migration
DROP TABLE IF EXISTS webhook_attempts;
DROP TABLE IF EXISTS webhook_messages;
DROP TABLE IF EXISTS webhook_endpoints;
