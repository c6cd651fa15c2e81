-- Up Migration
-- A per-organization count of open (created or active) sessions, kept by a trigger so every path
-- that opens or ends a session (REST, socket, SIP, sweepers) keeps it exact inside its own
-- transaction. Session creation checks it under the organization row lock instead of counting rows
-- (SPEC "Limits": concurrent session maximum → 429 concurrent_session_limit).

ALTER TABLE organizations ADD COLUMN open_sessions integer NOT NULL DEFAULT 0;

UPDATE organizations o
   SET open_sessions = (SELECT count(*) FROM sessions s WHERE s.org_id = o.id AND s.status <> 'ended');

CREATE FUNCTION sessions_count_open() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'ended' THEN
      UPDATE organizations SET open_sessions = open_sessions + 1 WHERE id = NEW.org_id;
    END IF;
  ELSIF TG_OP = 'UPDATE' THEN
    IF OLD.status <> 'ended' AND NEW.status = 'ended' THEN
      UPDATE organizations SET open_sessions = open_sessions - 1 WHERE id = OLD.org_id;
    ELSIF OLD.status = 'ended' AND NEW.status <> 'ended' THEN
      UPDATE organizations SET open_sessions = open_sessions + 1 WHERE id = NEW.org_id;
    END IF;
  ELSIF TG_OP = 'DELETE' THEN
    IF OLD.status <> 'ended' THEN
      UPDATE organizations SET open_sessions = open_sessions - 1 WHERE id = OLD.org_id;
    END IF;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER sessions_count_open AFTER INSERT OR DELETE OR UPDATE OF status ON sessions
  FOR EACH ROW EXECUTE FUNCTION sessions_count_open();

-- Down Migration
DROP TRIGGER IF EXISTS sessions_count_open ON sessions;
DROP FUNCTION IF EXISTS sessions_count_open();
ALTER TABLE organizations DROP COLUMN IF EXISTS open_sessions;
