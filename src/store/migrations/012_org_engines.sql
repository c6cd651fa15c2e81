-- Up Migration
-- An organization's own speech engines (`voxbridge admin org update ORG --stt … --translate … --tts …`).
-- One row per organization that chose any; a NULL stage uses the node's engine (engines.* config).
-- Each stage is {provider, url?, model?, voice?, apiKeySecret?, languages?}; the API key itself is a
-- named secret (table secrets), never stored here.

CREATE TABLE org_engines (
  org_id text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  stt jsonb,
  translate jsonb,
  tts jsonb,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE org_engines;
