-- Up Migration
-- Several short domains (ADR 0078). A link belongs to one short domain: `domain` is '' for the default one (the
-- first of SHORT_DOMAINS, whatever it is called) and the host name for any other. A link's key, links.code, is its
-- code on the default domain and `{domain}/{code}` on another, so the primary key on code is the unique key on
-- (domain, code) and every table and copy keyed by code keeps its key.
--
-- Fast on millions of rows: a column with a constant default is only catalogued (no table rewrite), the check is
-- added NOT VALID (no scan under the ACCESS EXCLUSIVE lock) and validated under a lock that lets reads and writes
-- go on, and the index holds only the other domains' rows (none yet).
ALTER TABLE links ADD COLUMN domain text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE links ADD CONSTRAINT links_domain_key_check CHECK (
  CASE WHEN domain = '' THEN strpos(code, '/') = 0
       ELSE starts_with(code, domain || '/') AND strpos(substr(code, length(domain) + 2), '/') = 0 END
) NOT VALID;
ALTER TABLE links VALIDATE CONSTRAINT links_domain_key_check;
-- Listing one of the other domains newest first (the default domain's listing uses links_created_idx).
CREATE INDEX links_domain_created_idx ON links (domain, created_at DESC, code DESC) WHERE domain <> '';

-- Which short domain a WordPress site's posts are minted in: set by an admin before or after the site's first
-- event (wordpress_sites has a row only once an event named its restUrl); a site without a row mints in the
-- default domain. Only new links follow a change: a post keeps the link it has.
CREATE TABLE wordpress_site_domains (
  site        text PRIMARY KEY,
  domain      text COLLATE "C" NOT NULL CHECK (domain <> '' AND strpos(domain, '/') = 0),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE IF EXISTS wordpress_site_domains;
DROP INDEX IF EXISTS links_domain_created_idx;
ALTER TABLE links DROP CONSTRAINT IF EXISTS links_domain_key_check;
ALTER TABLE links DROP COLUMN IF EXISTS domain;
