-- Up Migration
-- Destinations of links made in bulk (API batches, archive backfill, mass retargets, WordPress publishes and
-- updates) waiting for their archived copy (docs/adr/0076-archive-copies-through-one-queue.md): one row per link,
-- written in the transaction that makes or retargets it, drained by one workflow per task queue at the
-- Archive's rate (ARCHIVE_RATE). A row is removed once its copy is recorded (or skipped: our own hosts).
--   step 'begin':  nothing asked yet; the drainer decides (skip, Save Page Now, or the lookup);
--   step 'poll':   a capture was requested (job_id); due again at the next poll;
--   step 'lookup': the capture gave nothing; the closest existing snapshot is looked up.
-- `generation` moves on every enqueue of a queued code (a retarget while it waits), so the drainer's write for
-- the older destination never removes or overwrites the newer request.
CREATE TABLE archive_queue (
  code            text COLLATE "C" PRIMARY KEY REFERENCES links (code) ON DELETE CASCADE,
  reason          text NOT NULL,
  generation      integer NOT NULL DEFAULT 1,
  step            text NOT NULL DEFAULT 'begin' CHECK (step IN ('begin', 'poll', 'lookup')),
  -- The target the capture was asked for (set when the drainer meets it).
  url             text CHECK (url IS NULL OR octet_length(url) <= 2048),
  job_id          text,
  polls           integer NOT NULL DEFAULT 0,
  -- Failed attempts of the current step (the Archive's 429s and outages), and why the last one failed.
  attempts        integer NOT NULL DEFAULT 0,
  last_error      text CHECK (last_error IS NULL OR char_length(last_error) <= 500),
  enqueued_at     timestamptz NOT NULL DEFAULT now(),
  next_attempt_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX archive_queue_due_idx ON archive_queue (next_attempt_at, code);

-- Down Migration
DROP TABLE IF EXISTS archive_queue;
