-- Up Migration
-- The archived copy a link answers with while its destination is dead and its policy is `fallback`
-- (docs/adr/0070-archive-fallback-on-the-link-row.md): on the link row, beside the target, so the redirect's
-- lookup reads one more column instead of joining destination_states, and the change bumps `version` like any
-- other, which the serving store's version guard and every cache already follow. Null: the link answers its
-- target. destination_states.fallback_since records when the fallback was applied.
ALTER TABLE links
  ADD COLUMN fallback_url text CHECK (fallback_url IS NULL OR octet_length(fallback_url) <= 2048);

-- A new target is a new destination: the copy of the old one never answers for it. One trigger rather than a
-- rule in each writer (edits, mass retargets, WordPress updates and repairs, restores all write target_url).
CREATE FUNCTION links_clear_fallback_on_retarget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.fallback_url := NULL;
  RETURN NEW;
END;
$$;
CREATE TRIGGER links_clear_fallback_on_retarget
  BEFORE UPDATE OF target_url ON links
  FOR EACH ROW
  WHEN (OLD.target_url IS DISTINCT FROM NEW.target_url AND NEW.fallback_url IS NOT NULL)
  EXECUTE FUNCTION links_clear_fallback_on_retarget();

-- Down Migration
DROP TRIGGER IF EXISTS links_clear_fallback_on_retarget ON links;
DROP FUNCTION IF EXISTS links_clear_fallback_on_retarget();
ALTER TABLE links DROP COLUMN IF EXISTS fallback_url;
