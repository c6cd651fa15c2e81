-- Up Migration
-- Web console (issue 14): the sessions list, the live session feed and the webhook delivery log.

-- GET /console/api/sessions pages one organization's sessions in id (creation) order.
CREATE INDEX sessions_org_id ON sessions(org_id, id);

-- The console's live session page: every outbox event that names a session is announced on
-- console_<schema> as "<org_id> <session_id> <event_id>", so the node holding a browser's event
-- stream hears of a segment written on any other node.
CREATE FUNCTION webhook_events_console_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  sid text := COALESCE(NEW.data->>'session_id', CASE WHEN NEW.type LIKE 'session.%' THEN NEW.data->>'id' END);
BEGIN
  IF sid IS NOT NULL THEN
    PERFORM pg_notify('console_' || TG_TABLE_SCHEMA, NEW.org_id || ' ' || sid || ' ' || NEW.id);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_events_console_notify AFTER INSERT ON webhook_events
  FOR EACH ROW EXECUTE FUNCTION webhook_events_console_notify();

-- The delivery log shows what the receiver answered: headers and the first 4 KB of the body.
ALTER TABLE webhook_delivery_attempts
  ADD COLUMN response_headers jsonb,
  ADD COLUMN response_body text;

-- Down Migration
ALTER TABLE webhook_delivery_attempts DROP COLUMN response_headers, DROP COLUMN response_body;
DROP TRIGGER IF EXISTS webhook_events_console_notify ON webhook_events;
DROP FUNCTION IF EXISTS webhook_events_console_notify();
DROP INDEX IF EXISTS sessions_org_id;
