-- Up Migration
-- SIP capture (issue 11): every SIP message of a call, both directions, kept for
-- config.sipCapture.retentionHours (default 24 h) and searchable by Call-ID, number or session
-- (through calls.call_sid). Written in batches off the call path; purged by the retention job.
CREATE TABLE sip_messages (
  id bigserial PRIMARY KEY,
  captured_at timestamptz NOT NULL,
  call_id text NOT NULL,
  direction text NOT NULL CHECK (direction IN ('in', 'out')),
  transport text NOT NULL,
  src_address text NOT NULL,
  src_port integer NOT NULL,
  dst_address text NOT NULL,
  dst_port integer NOT NULL,
  -- A request's method, or NULL for a response (then status is set).
  method text,
  status integer,
  cseq text NOT NULL,
  from_user text,
  to_user text,
  raw text NOT NULL
);
CREATE INDEX sip_messages_call_id ON sip_messages (call_id, captured_at, id);
CREATE INDEX sip_messages_captured_at ON sip_messages (captured_at);
CREATE INDEX sip_messages_from_user ON sip_messages (from_user, captured_at) WHERE from_user IS NOT NULL;
CREATE INDEX sip_messages_to_user ON sip_messages (to_user, captured_at) WHERE to_user IS NOT NULL;

-- Down Migration
DROP TABLE sip_messages;
