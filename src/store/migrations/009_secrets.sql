-- Up Migration
-- Named secrets (engine API keys and the like), encrypted at rest with config.secretKey
-- (AES-256-GCM, src/secrets/crypto.ts). org_id NULL: a node-wide secret (engines configured for the
-- whole deployment); otherwise the organization's own (its LLM or engine keys). Values are never
-- returned by the API or printed by the CLI; only names and dates are listed.

CREATE TABLE secrets (
  org_id text REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.-]{1,100}$'),
  value_enc text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX secrets_scope_name ON secrets (COALESCE(org_id, ''), name);

-- Down Migration
DROP TABLE secrets;
