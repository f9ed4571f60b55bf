-- Up Migration
-- Per-link UTM parameters (campaign, source, medium), appended to the link's Location beside the deployment's
-- UTM_PARAMS: a link's own value wins over UTM_PARAMS for the same key, and a key the target already carries is
-- never replaced (lib/redirect/redirect_policy.ts). Nullable columns without a default: adding them rewrites
-- nothing, however many links there are. 100 characters is GA4's limit for a parameter value.
ALTER TABLE links
  ADD COLUMN utm_campaign text CHECK (char_length(utm_campaign) BETWEEN 1 AND 100),
  ADD COLUMN utm_source   text CHECK (char_length(utm_source) BETWEEN 1 AND 100),
  ADD COLUMN utm_medium   text CHECK (char_length(utm_medium) BETWEEN 1 AND 100);

-- Down Migration
ALTER TABLE links DROP COLUMN IF EXISTS utm_campaign, DROP COLUMN IF EXISTS utm_source,
  DROP COLUMN IF EXISTS utm_medium;
