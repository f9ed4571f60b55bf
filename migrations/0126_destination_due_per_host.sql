-- Up Migration
-- The destination checker takes due rows host by host (lib/stores/destination_state_store.ts): the next host after
-- a cursor, then that host's oldest due rows. Both are reads of this index, so a take costs what it returns, not
-- what is due (a million-post backfill makes a million rows due at once). It also serves every lookup by host,
-- which the plain host index did.
CREATE INDEX destination_states_host_due_idx ON destination_states (host, next_check_at, code);
DROP INDEX IF EXISTS destination_states_host_idx;

-- Down Migration
CREATE INDEX IF NOT EXISTS destination_states_host_idx ON destination_states (host);
DROP INDEX IF EXISTS destination_states_host_due_idx;
