-- Up Migration
-- The console overview charts an organization's usage per day (GET /console/api/usage) in one
-- statement: sessions come through sessions(org_id, id) (ids are time-ordered); these indexes serve
-- the other tables it reads for one organization and a time window.

-- Analyses requested per day (ids are time-ordered, like sessions).
CREATE INDEX analyses_org_id ON analyses(org_id, id);
-- Credits taken and added per day.
CREATE INDEX credit_ledger_org_time ON credit_ledger(org_id, created_at);
-- Recent errors: failed recordings and failed webhook deliveries, few rows each.
CREATE INDEX recordings_org_failed ON recordings(org_id, id) WHERE status = 'failed';
CREATE INDEX webhook_deliveries_org_failed ON webhook_deliveries(org_id, finished_at) WHERE status = 'failed';

-- Down Migration
DROP INDEX IF EXISTS webhook_deliveries_org_failed;
DROP INDEX IF EXISTS recordings_org_failed;
DROP INDEX IF EXISTS credit_ledger_org_time;
DROP INDEX IF EXISTS analyses_org_id;
