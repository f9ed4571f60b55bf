-- Up Migration
-- Staff identity (docs/adr/0084-staff-identity.md): four roles, TOTP for local accounts, OpenID Connect
-- accounts linked by (issuer, subject), sessions that remember how far sign-in got.

-- viewer < editor < moderator < admin; today's editors and admins keep their names and what they could do.
ALTER TABLE users DROP CONSTRAINT IF EXISTS users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('viewer', 'editor', 'moderator', 'admin'));

-- API keys may carry the moderation scope (reports and blocklist) without being admin keys.
ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_scopes_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check
  CHECK (scopes <@ ARRAY['links:read', 'links:write', 'moderation', 'admin']::text[]);

-- A session is 'mfa' between a right password and a right code: it may open the code form and nothing else.
ALTER TABLE sessions ADD COLUMN stage text NOT NULL DEFAULT 'signed-in' CHECK (stage IN ('mfa', 'signed-in'));
ALTER TABLE sessions ADD COLUMN method text NOT NULL DEFAULT 'password' CHECK (method IN ('password', 'oidc'));

-- One TOTP secret per local account. confirmed_at is set once a code made from it was typed back;
-- last_step is the newest time step accepted, so a code is never accepted twice.
CREATE TABLE user_totp (
  user_id       bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  secret        text NOT NULL,
  confirmed_at  timestamptz,
  last_step     bigint NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- Single-use recovery codes, stored as SHA-256 (they are random, 50 bits each: no stretching needed).
CREATE TABLE user_recovery_codes (
  user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash  text NOT NULL,
  used_at    timestamptz,
  PRIMARY KEY (user_id, code_hash)
);

-- An OpenID Connect account is its issuer's subject, never its e-mail address.
CREATE TABLE user_identities (
  issuer         text NOT NULL,
  subject        text NOT NULL,
  user_id        bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  email          text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_login_at  timestamptz,
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user_idx ON user_identities (user_id);

-- A sign-in sent to the provider: found again by its state (hashed), taken once, dropped after ten minutes.
CREATE TABLE oidc_login_attempts (
  state_hash     text PRIMARY KEY,
  nonce          text NOT NULL,
  code_verifier  text NOT NULL,
  next_path      text NOT NULL,
  expires_at     timestamptz NOT NULL
);

-- Down Migration
DROP TABLE IF EXISTS oidc_login_attempts, user_identities, user_recovery_codes, user_totp;
ALTER TABLE sessions DROP COLUMN IF EXISTS method;
ALTER TABLE sessions DROP COLUMN IF EXISTS stage;
UPDATE api_keys SET scopes = array_remove(scopes, 'moderation');
ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_scopes_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check
  CHECK (scopes <@ ARRAY['links:read', 'links:write', 'admin']::text[]);
UPDATE users SET role = 'editor' WHERE role IN ('viewer', 'moderator');
ALTER TABLE users DROP CONSTRAINT IF EXISTS users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('editor', 'admin'));
