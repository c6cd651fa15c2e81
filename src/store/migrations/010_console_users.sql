-- Web console users (src/console/): organization users (owner, developer, viewer) and gateway-wide
-- operators (org_id NULL). Browser sign-in sessions live in Redis, not here.
CREATE TABLE console_users (
  id text PRIMARY KEY,
  org_id text REFERENCES organizations(id) ON DELETE CASCADE,
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer', 'operator')),
  -- argon2id PHC string; NULL until the user sets a password through their one-time link.
  password_hash text,
  -- SHA-256 of the one-time set-password token, cleared when used.
  set_password_token_hash text UNIQUE,
  set_password_expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((role = 'operator') = (org_id IS NULL))
);
CREATE UNIQUE INDEX console_users_email ON console_users (lower(email));
CREATE INDEX console_users_org ON console_users (org_id);
