-- Up Migration
-- The editor UI's language per user (docs/UI.md, "Languages"): NULL follows the browser (Accept-Language).
-- Any BCP 47-shaped tag is stored; the UI uses it only when it has a catalogue for it, so adding a language
-- needs no migration.
ALTER TABLE users ADD COLUMN locale text CHECK (locale ~ '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$');

-- Down Migration
ALTER TABLE users DROP COLUMN IF EXISTS locale;
