-- Up Migration
-- Click flush batches already counted: a flush whose connection dies at commit time cannot tell whether its
-- batch landed, so it retries the same batch under the same id and the id makes the retry a no-op.
-- Rows older than a day are pruned by the flushes themselves.
CREATE TABLE click_flush_batches (
  id          uuid PRIMARY KEY,
  flushed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX click_flush_batches_flushed_at_idx ON click_flush_batches (flushed_at);

-- Down Migration
DROP TABLE IF EXISTS click_flush_batches;
