-- Up Migration
-- Webhook delivery (issue 8, SPEC "Webhook delivery"). The outbox (webhook_events) is fanned out into
-- one delivery row per (event, endpoint); workers on any node claim due deliveries with
-- FOR UPDATE SKIP LOCKED, so one attempt is sent by one node; every attempt is logged.

-- Endpoints: secrets are stored encrypted (AES-256-GCM under config.secretKey), not hashed, because the
-- service signs with them. During a rotation the previous secret keeps signing until it expires.
ALTER TABLE webhook_endpoints DROP COLUMN status;
ALTER TABLE webhook_endpoints
  ADD COLUMN description text,
  ADD COLUMN metadata jsonb,
  -- What the caller subscribed to (types, category names or '*'), and its expansion into event types.
  ADD COLUMN event_types text[] NOT NULL DEFAULT '{}',
  ADD COLUMN enabled boolean NOT NULL DEFAULT true,
  ADD COLUMN disabled_reason text,
  ADD COLUMN disabled_at timestamptz,
  ADD COLUMN previous_secret_enc text,
  ADD COLUMN previous_secret_expires_at timestamptz,
  -- Set by the first failed attempt after a success; an endpoint failing for 3 days is disabled.
  ADD COLUMN failing_since timestamptz,
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX webhook_endpoints_org ON webhook_endpoints(org_id, id);

-- One row per (event, endpoint): the delivery state. `ordering_key` (the session id) keeps one
-- session's events in order per endpoint while the endpoint is healthy: a delivery is `ready` to be
-- claimed only once the previous one of its session has had its first attempt.
CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  event_id text NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  org_id text NOT NULL,
  event_type text NOT NULL,
  ordering_key text,
  ready boolean NOT NULL DEFAULT true,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- A claim's lease: while in the future, one node is sending this delivery.
  locked_until timestamptz,
  last_status_code integer,
  last_error text,
  event_created_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at, id) WHERE status = 'pending' AND ready;
CREATE INDEX webhook_deliveries_order ON webhook_deliveries(endpoint_id, ordering_key, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries(endpoint_id) WHERE status = 'pending' AND locked_until IS NOT NULL;
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries(finished_at) WHERE status <> 'pending';

-- The attempt log shown by GET /v1/webhook_endpoints/{id}/deliveries.
CREATE TABLE webhook_delivery_attempts (
  id bigserial PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  endpoint_id text NOT NULL,
  event_id text NOT NULL,
  event_type text NOT NULL,
  attempt integer NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed')),
  status_code integer,
  error text,
  duration_ms integer NOT NULL,
  attempted_at timestamptz NOT NULL,
  next_retry_at timestamptz
);
CREATE INDEX webhook_delivery_attempts_endpoint ON webhook_delivery_attempts(endpoint_id, id);
CREATE INDEX webhook_delivery_attempts_time ON webhook_delivery_attempts(attempted_at);
CREATE INDEX webhook_events_dispatched ON webhook_events(dispatched_at) WHERE dispatched_at IS NOT NULL;

-- Wakes the delivery workers as soon as an event is committed (LISTEN webhooks_<schema>); one
-- notification per statement, and PostgreSQL folds duplicates within a transaction.
CREATE FUNCTION webhook_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('webhooks_' || TG_TABLE_SCHEMA, '');
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_events_notify AFTER INSERT ON webhook_events
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_events_notify();

-- Down Migration
DROP TRIGGER IF EXISTS webhook_events_notify ON webhook_events;
DROP FUNCTION IF EXISTS webhook_events_notify();
DROP INDEX IF EXISTS webhook_events_dispatched;
DROP TABLE IF EXISTS webhook_delivery_attempts, webhook_deliveries;
DROP INDEX IF EXISTS webhook_endpoints_org;
ALTER TABLE webhook_endpoints
  DROP COLUMN description, DROP COLUMN metadata, DROP COLUMN event_types, DROP COLUMN enabled,
  DROP COLUMN disabled_reason, DROP COLUMN disabled_at, DROP COLUMN previous_secret_enc,
  DROP COLUMN previous_secret_expires_at, DROP COLUMN failing_since, DROP COLUMN updated_at;
ALTER TABLE webhook_endpoints ADD COLUMN status text NOT NULL DEFAULT 'active';
