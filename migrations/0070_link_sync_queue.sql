-- Up Migration
-- Bulk changes waiting for the sync-queue drainer (ADR 0024): one row per code, written in the same transaction
-- as the change (API batch create, archive backfill), removed only once the code's replicas (serving store,
-- caches, CDN, Bitly, expiry timer) equal Postgres, or once it was handed to its own `sync:{code}` workflow.
-- `generation` moves on every enqueue of a queued code, so a change that arrives while a batch runs is never
-- removed with it. `attempts`/`next_attempt_at` are the per-link backoff; `last_error` says why.
CREATE TABLE link_sync_queue (
  code            text COLLATE "C" PRIMARY KEY,
  reason          text NOT NULL,
  generation      integer NOT NULL DEFAULT 1,
  enqueued_at     timestamptz NOT NULL DEFAULT now(),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error      text
);
-- The drainer takes the due rows in this order.
CREATE INDEX link_sync_queue_due_idx ON link_sync_queue (next_attempt_at, code);

-- Down Migration
DROP TABLE IF EXISTS link_sync_queue;
