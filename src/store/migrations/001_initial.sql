-- Up Migration
-- voxbridge schema. PostgreSQL is the source of truth (DESIGN.md "Data").

CREATE TABLE organizations (
  id text PRIMARY KEY,
  name text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  credits bigint NOT NULL DEFAULT 1000 CHECK (credits >= 0),
  credits_used bigint NOT NULL DEFAULT 0,
  max_concurrent_sessions integer NOT NULL,
  rate_limit integer NOT NULL,
  rate_window_seconds integer NOT NULL,
  features text[] NOT NULL DEFAULT '{}',
  allowed_overrides text[] NOT NULL DEFAULT '{}',
  sip_enabled boolean NOT NULL DEFAULT false,
  default_connection_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  environment text NOT NULL CHECK (environment IN ('live', 'test')),
  key_hash text NOT NULL UNIQUE,
  key_hint text NOT NULL,
  scopes text[] NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_org ON api_keys(org_id);

CREATE TABLE agents (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  language text,
  voice jsonb,
  greeting text,
  instructions text,
  brain jsonb NOT NULL DEFAULT '{"provider":"scripted"}',
  intents jsonb NOT NULL DEFAULT '[]',
  tools jsonb NOT NULL DEFAULT '[]',
  escalation jsonb,
  knowledge_base jsonb NOT NULL DEFAULT '[]',
  metadata jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agents_org_id ON agents(org_id, id);

CREATE TABLE provider_connections (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  provider text NOT NULL CHECK (provider IN ('carrier_a', 'carrier_b')),
  host text NOT NULL,
  port integer NOT NULL DEFAULT 5060,
  transport text NOT NULL DEFAULT 'udp' CHECK (transport IN ('udp', 'tcp')),
  username text,
  password_enc text,
  inbound_cidrs text[] NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  credentials_valid boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX provider_connections_org ON provider_connections(org_id);

CREATE TABLE phone_numbers (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  number text NOT NULL UNIQUE,
  connection_id text REFERENCES provider_connections(id),
  default_session_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX phone_numbers_org ON phone_numbers(org_id);

CREATE TABLE sessions (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  api_key_id text,
  status text NOT NULL DEFAULT 'created' CHECK (status IN ('created', 'active', 'ended')),
  mode text NOT NULL,
  configuration_mode text,
  source_language text,
  target_language text,
  provider text,
  phone_number text,
  connection_id text,
  routing jsonb,
  audio jsonb NOT NULL,
  voice jsonb NOT NULL,
  recording jsonb NOT NULL,
  ai_agent jsonb,
  metadata jsonb,
  owner_node text,
  end_reason text,
  duration_seconds double precision,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  ended_at timestamptz,
  last_activity_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_org_open ON sessions(org_id) WHERE status <> 'ended';
CREATE INDEX sessions_idle ON sessions(last_activity_at) WHERE status <> 'ended';
CREATE INDEX sessions_phone_open ON sessions(phone_number) WHERE status <> 'ended';

CREATE TABLE calls (
  id text PRIMARY KEY,
  session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  org_id text NOT NULL,
  party text NOT NULL CHECK (party IN ('agent', 'customer')),
  direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  provider text NOT NULL,
  call_sid text NOT NULL,
  from_uri text,
  to_uri text,
  status text NOT NULL,
  disconnect_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  connected_at timestamptz,
  ended_at timestamptz
);
CREATE INDEX calls_session ON calls(session_id);
CREATE UNIQUE INDEX calls_call_sid ON calls(call_sid);

CREATE TABLE transcript_turns (
  session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  sequence integer NOT NULL,
  speaker text NOT NULL,
  language text,
  text text NOT NULL,
  translation jsonb,
  confidence double precision,
  start_time double precision,
  end_time double precision,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, sequence)
);

CREATE TABLE recordings (
  id text PRIMARY KEY,
  session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  org_id text NOT NULL,
  channel text NOT NULL CHECK (channel IN ('agent', 'customer', 'mixed')),
  status text NOT NULL DEFAULT 'processing' CHECK (status IN ('processing', 'ready', 'failed')),
  format text NOT NULL DEFAULT 'mp3',
  duration double precision,
  size bigint,
  sample_rate integer NOT NULL DEFAULT 8000,
  bit_depth integer NOT NULL DEFAULT 16,
  file_path text,
  message text,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz
);
CREATE INDEX recordings_session ON recordings(session_id, id);

CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  url text NOT NULL,
  events text[] NOT NULL DEFAULT '{}',
  realtime boolean NOT NULL DEFAULT false,
  secret_enc text NOT NULL,
  status text NOT NULL DEFAULT 'active',
  created_at timestamptz NOT NULL DEFAULT now()
);

-- The outbox: a state change and its event are written in one transaction.
CREATE TABLE webhook_events (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  type text NOT NULL,
  api_version text NOT NULL DEFAULT 'v1',
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  dispatched_at timestamptz
);
CREATE INDEX webhook_events_pending ON webhook_events(created_at) WHERE dispatched_at IS NULL;
CREATE INDEX webhook_events_org ON webhook_events(org_id, created_at);

CREATE TABLE credit_ledger (
  id bigserial PRIMARY KEY,
  org_id text NOT NULL,
  delta bigint NOT NULL,
  reason text NOT NULL,
  request_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE session_usage (
  session_id text PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
  org_id text NOT NULL,
  seconds double precision NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE IF EXISTS session_usage, credit_ledger, webhook_events, webhook_endpoints, recordings,
  transcript_turns, calls, sessions, phone_numbers, provider_connections, agents, api_keys, organizations CASCADE;
