-- Up Migration
-- Recordings written while a call runs and encoded after it ends; post-call analyses; the
-- organization policies both read (retention, compliance rules).

-- capture_done: the live node closed the WAV (the encoder may start). lease_until: an encoder holds
-- the row until then (a crashed encoder's lease runs out and another run resumes the row).
ALTER TABLE recordings
  ADD COLUMN capture_done boolean NOT NULL DEFAULT true,
  ADD COLUMN wav_path text,
  ADD COLUMN lease_until timestamptz,
  ADD COLUMN attempts integer NOT NULL DEFAULT 0;
CREATE INDEX recordings_processing ON recordings(created_at) WHERE status = 'processing';
CREATE INDEX recordings_expiring ON recordings(expires_at) WHERE file_path IS NOT NULL;

-- Retention of recordings in days (documented default 30) and the compliance rules of the analyser.
ALTER TABLE organizations
  ADD COLUMN recording_retention_days integer NOT NULL DEFAULT 30 CHECK (recording_retention_days > 0),
  ADD COLUMN compliance_rules jsonb NOT NULL DEFAULT '{}'::jsonb;

CREATE TABLE analyses (
  id text PRIMARY KEY,
  session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  org_id text NOT NULL,
  call_id text,
  profile text NOT NULL DEFAULT 'default',
  include text[] NOT NULL,
  status text NOT NULL DEFAULT 'processing' CHECK (status IN ('processing', 'completed', 'failed')),
  summary text,
  sentiment jsonb,
  compliance jsonb,
  keywords jsonb,
  performance jsonb,
  details jsonb,
  error text,
  lease_until timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
CREATE INDEX analyses_processing ON analyses(created_at) WHERE status = 'processing';
CREATE INDEX analyses_session ON analyses(session_id);

-- Down Migration
DROP TABLE IF EXISTS analyses;
ALTER TABLE organizations DROP COLUMN IF EXISTS recording_retention_days, DROP COLUMN IF EXISTS compliance_rules;
DROP INDEX IF EXISTS recordings_processing;
DROP INDEX IF EXISTS recordings_expiring;
ALTER TABLE recordings DROP COLUMN IF EXISTS capture_done, DROP COLUMN IF EXISTS wav_path, DROP COLUMN IF EXISTS lease_until, DROP COLUMN IF EXISTS attempts;
