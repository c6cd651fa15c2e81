// The web console's reads (src/console/): the owner's connections and numbers, the keys list with
// "last used", the signed-in organization's summary and usage, the live feed's event read-back, and
// the operator view's gateway-wide lists. Console users themselves are in src/console/users.ts.
import { idFloor } from '../ids.js';
import type { Db } from './db.js';
import type { OrgRecord } from './orgs.js';
import type { CallRecord, ConnectionRecord, PhoneNumberRecord, ProviderName } from './telephony-repo.js';

// --- Organization user's view -------------------------------------------------------------------

/** What GET /console/api/auth/me shows of the signed-in user's organization. */
export type OrgSummaryRow = Pick<OrgRecord, 'id' | 'name' | 'status' | 'credits' | 'credits_used' | 'features'>;

/** The organization's summary for the console's header; null when it no longer exists. */
export async function getOrgSummary(db: Db, orgId: string): Promise<OrgSummaryRow | null> {
  const { rows } = await db.query<OrgSummaryRow>('SELECT id, name, status, credits, credits_used, features FROM organizations WHERE id = $1', [orgId]);
  return rows[0] ?? null;
}

/** A connection as the console lists it: never its credentials, only whether they are set. */
export type ConsoleConnectionRow = Pick<
  ConnectionRecord,
  'id' | 'provider' | 'host' | 'port' | 'transport' | 'status' | 'credentials_valid' | 'inbound_cidrs' | 'created_at'
> & {
  has_credentials: boolean;
  /** Null when the organization has no default connection. */
  is_default: boolean | null;
  /** Managed numbers on this connection. */
  numbers: number;
};

/** The organization's provider connections (by id), for its owners' numbers-and-connections page. */
export async function listOrgConnections(db: Db, orgId: string): Promise<ConsoleConnectionRow[]> {
  const { rows } = await db.query<ConsoleConnectionRow>(
    `SELECT c.id, c.provider, c.host, c.port, c.transport, c.status, c.credentials_valid, c.inbound_cidrs,
              (c.username IS NOT NULL AND c.password_enc IS NOT NULL) AS has_credentials,
              (o.default_connection_id = c.id) AS is_default, c.created_at,
              (SELECT count(*)::int FROM phone_numbers n WHERE n.connection_id = c.id) AS numbers
         FROM provider_connections c JOIN organizations o ON o.id = c.org_id
        WHERE c.org_id = $1 ORDER BY c.id`,
    [orgId],
  );
  return rows;
}

/** A managed number with its connection's provider and status (null when it has no connection). */
export type ConsoleNumberRow = Pick<PhoneNumberRecord, 'id' | 'number' | 'connection_id' | 'created_at'> & {
  provider: ProviderName | null;
  connection_status: ConnectionRecord['status'] | null;
};

/** The organization's managed numbers (by number), for its owners' numbers-and-connections page. */
export async function listOrgNumbers(db: Db, orgId: string): Promise<ConsoleNumberRow[]> {
  const { rows } = await db.query<ConsoleNumberRow>(
    `SELECT n.id, n.number, n.connection_id, c.provider, c.status AS connection_status, n.created_at
         FROM phone_numbers n LEFT JOIN provider_connections c ON c.id = n.connection_id
        WHERE n.org_id = $1 ORDER BY n.number`,
    [orgId],
  );
  return rows;
}

/** An API key as the console lists it: no hash, and when it last created a session. */
export interface ConsoleApiKeyRow {
  id: string;
  environment: 'live' | 'test';
  key_hint: string;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
  /** The last session the key created: the gateway records no per-request use. Null when none. */
  last_used_at: Date | null;
}

/** The organization's API keys, newest first, for the console's keys page. */
export async function listOrgApiKeys(db: Db, orgId: string): Promise<ConsoleApiKeyRow[]> {
  const { rows } = await db.query<ConsoleApiKeyRow>(
    `SELECT k.id, k.environment, k.key_hint, k.scopes, k.expires_at, k.revoked_at, k.created_at,
              (SELECT max(s.created_at) FROM sessions s WHERE s.api_key_id = k.id) AS last_used_at
         FROM api_keys k WHERE k.org_id = $1 ORDER BY k.id DESC`,
    [orgId],
  );
  return rows;
}

/** One outbox event as the console's live feed pushes it. */
export interface OrgEventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/**
 * One outbox event, only if it belongs to the organization: the live feed reads back each event a
 * notification names (the notification alone is not trusted to scope it). Null when not found.
 */
export async function getOrgEvent(db: Db, eventId: string, orgId: string): Promise<OrgEventRow | null> {
  const { rows } = await db.query<OrgEventRow>('SELECT id, type, data, created_at FROM webhook_events WHERE id = $1 AND org_id = $2', [eventId, orgId]);
  return rows[0] ?? null;
}

// --- Usage (GET /console/api/usage) -------------------------------------------------------------

/** Session end reasons that mean something went wrong (the client's own end, a hang-up or the agent's end are normal). */
export const ERROR_END_REASONS = ['node_lost', 'node_shutdown', 'stream_disconnected', 'inactivity'] as const;

const USAGE_SQL = `
WITH d AS (
  SELECT generate_series(($2::timestamptz AT TIME ZONE 'UTC')::date, (now() AT TIME ZONE 'UTC')::date, interval '1 day')::date AS day
), s AS (
  SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n, coalesce(sum(duration_seconds), 0) AS seconds,
         count(*) FILTER (WHERE end_reason = ANY($5::text[])) AS failed
    FROM sessions WHERE org_id = $1 AND id >= $3 AND created_at >= $2::timestamptz GROUP BY 1
), a AS (
  SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n, count(*) FILTER (WHERE status = 'failed') AS failed
    FROM analyses WHERE org_id = $1 AND id >= $4 AND created_at >= $2::timestamptz GROUP BY 1
), c AS (
  SELECT (created_at AT TIME ZONE 'UTC')::date AS day,
         coalesce(-sum(delta) FILTER (WHERE delta < 0), 0) AS used, coalesce(sum(delta) FILTER (WHERE delta > 0), 0) AS added
    FROM credit_ledger WHERE org_id = $1 AND created_at >= $2::timestamptz GROUP BY 1
), e AS (
  (SELECT 'session' AS kind, id, id AS session_id, 'Session ended: ' || end_reason AS message, coalesce(ended_at, created_at) AS at
     FROM sessions WHERE org_id = $1 AND id >= $3 AND end_reason = ANY($5::text[]) ORDER BY id DESC LIMIT 10)
  UNION ALL
  (SELECT 'analysis', id, session_id, 'Analysis failed: ' || coalesce(error, 'no reason recorded'), coalesce(completed_at, created_at)
     FROM analyses WHERE org_id = $1 AND id >= $4 AND status = 'failed' ORDER BY id DESC LIMIT 10)
  UNION ALL
  (SELECT 'recording', id, session_id, 'Recording (' || channel || ') failed: ' || coalesce(error, message, 'no reason recorded'), created_at
     FROM recordings WHERE org_id = $1 AND id >= $6 AND status = 'failed' ORDER BY id DESC LIMIT 10)
  UNION ALL
  (SELECT 'webhook_delivery', event_id, ordering_key,
          'Webhook ' || event_type || ' to ' || endpoint_id || ' failed after ' || attempts || ' attempts: '
            || coalesce(last_error, 'HTTP ' || last_status_code, 'no answer'), finished_at
     FROM webhook_deliveries WHERE org_id = $1 AND status = 'failed' AND finished_at >= $2::timestamptz ORDER BY finished_at DESC LIMIT 10)
)
SELECT o.credits, o.credits_used, o.open_sessions,
       (SELECT json_agg(json_build_object(
                 'date', to_char(d.day, 'YYYY-MM-DD'), 'sessions', coalesce(s.n, 0), 'seconds', coalesce(s.seconds, 0),
                 'failed_sessions', coalesce(s.failed, 0), 'analyses', coalesce(a.n, 0), 'failed_analyses', coalesce(a.failed, 0),
                 'credits_used', coalesce(c.used, 0), 'credits_added', coalesce(c.added, 0)) ORDER BY d.day)
          FROM d LEFT JOIN s USING (day) LEFT JOIN a USING (day) LEFT JOIN c USING (day)) AS series,
       (SELECT coalesce(json_agg(x ORDER BY x.at DESC), '[]') FROM (SELECT * FROM e ORDER BY at DESC LIMIT 10) x) AS errors
  FROM organizations o WHERE o.id = $1`;

/** One UTC day of the usage series, as aggregated (billed time still in seconds). */
export interface UsageDayRow {
  /** YYYY-MM-DD. */
  date: string;
  sessions: number;
  seconds: number;
  failed_sessions: number;
  analyses: number;
  failed_analyses: number;
  credits_used: number;
  credits_added: number;
}

/** One recent error of the usage window. */
export interface UsageErrorRow {
  kind: 'session' | 'analysis' | 'recording' | 'webhook_delivery';
  id: string;
  session_id: string | null;
  message: string;
  at: string;
}

/** The usage statement's one row: the organization's balance, open sessions, day series and recent errors. */
export interface UsageRow {
  credits: string;
  credits_used: string;
  open_sessions: number;
  series: UsageDayRow[];
  errors: UsageErrorRow[];
}

/** The one statement behind the console's overview, for a window from `start` (ms; exported for the benchmark's EXPLAIN). */
export function usageQuery(orgId: string, start: number): { text: string; values: unknown[] } {
  return {
    text: USAGE_SQL,
    values: [orgId, new Date(start).toISOString(), idFloor('sess', start), idFloor('anl', start), [...ERROR_END_REASONS], idFloor('rec', start)],
  };
}

/**
 * The organization's usage from `start` (ms, midnight UTC) to today, aggregated by PostgreSQL in one
 * statement (migration 017's indexes; sessions(org_id, id) scanned by an id range since ids are
 * time-ordered). Null when the organization does not exist.
 */
export async function readOrgUsage(db: Db, orgId: string, start: number): Promise<UsageRow | null> {
  const q = usageQuery(orgId, start);
  const { rows } = await db.query<UsageRow>(q.text, q.values);
  return rows[0] ?? null;
}

// --- Operator view (gateway-wide) ---------------------------------------------------------------

/** Sessions not ended, across every organization (the operator's nodes page). */
export async function countLiveSessions(db: Db): Promise<number> {
  const { rows } = await db.query<{ live: string }>(`SELECT count(*) AS live FROM sessions WHERE status <> 'ended'`);
  return Number(rows[0]?.live ?? 0);
}

/** A call leg with its session's mode and status; `call` is the stored row as JSON (every column, an ended leg's final quality included). */
export interface OperatorCallRow {
  call: { id: string; ended_at: string | null; quality: unknown };
  mode: string;
  session_status: string;
}

/**
 * The operator's calls page: with no search, the legs not ended; with one, legs whose Call-ID or
 * session id is it or whose from/to contains it. Newest first, at most 100, across organizations.
 */
export async function listOperatorCalls(db: Db, search: string | null): Promise<OperatorCallRow[]> {
  const { rows } = await db.query<OperatorCallRow>(
    `SELECT to_jsonb(c.*) AS call, s.mode, s.status AS session_status
         FROM calls c JOIN sessions s ON s.id = c.session_id
        WHERE ($1::text IS NULL AND c.ended_at IS NULL)
           OR ($1::text IS NOT NULL AND (c.call_sid = $1 OR c.session_id = $1 OR c.from_uri ILIKE '%' || $1 || '%' OR c.to_uri ILIKE '%' || $1 || '%'))
        ORDER BY c.created_at DESC LIMIT 100`,
    [search],
  );
  return rows;
}

/** An organization as the operator lists it, with its sessions not ended. */
export type OperatorOrgRow = Pick<OrgRecord, 'id' | 'name' | 'status' | 'credits' | 'credits_used' | 'max_concurrent_sessions' | 'rate_limit' | 'features'> & {
  live_sessions: number;
};

/** Every organization (by id) with its live session count, for the operator's organizations page. */
export async function listOperatorOrgs(db: Db): Promise<OperatorOrgRow[]> {
  const { rows } = await db.query<OperatorOrgRow>(
    `SELECT o.id, o.name, o.status, o.credits, o.credits_used, o.max_concurrent_sessions, o.rate_limit, o.features,
              (SELECT count(*)::int FROM sessions s WHERE s.org_id = o.id AND s.status <> 'ended') AS live_sessions
         FROM organizations o ORDER BY o.id`,
  );
  return rows;
}

/** The call leg beside a SIP trace: who, which way, its status and times (not its quality or provider). */
export type SipTraceCallRow = Pick<CallRecord, 'id' | 'session_id' | 'party' | 'direction' | 'from_uri' | 'to_uri' | 'status' | 'created_at' | 'ended_at'>;

/** The call leg with this SIP Call-ID (call_sid), for the operator's ladder diagram; null when none. */
export async function getSipTraceCall(db: Db, callSid: string): Promise<SipTraceCallRow | null> {
  const { rows } = await db.query<SipTraceCallRow>(
    `SELECT id, session_id, party, direction, from_uri, to_uri, status, created_at, ended_at FROM calls WHERE call_sid = $1`,
    [callSid],
  );
  return rows[0] ?? null;
}
