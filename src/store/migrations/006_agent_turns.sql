-- Up Migration
-- AI agent modes: an agent reply cut off by the customer (barge-in) is stored with only what was
-- played and marked interrupted.
ALTER TABLE transcript_turns ADD COLUMN interrupted boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE transcript_turns DROP COLUMN interrupted;
