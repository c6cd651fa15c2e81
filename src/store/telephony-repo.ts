// Telephony data: provider connections (pcon_), managed phone numbers and calls (one row per SIP leg).
import { newId } from '../ids.js';
import type { DbClient } from './db.js';

export type ProviderName = 'carrier_a' | 'carrier_b';
export type RtpLatching = 'nat' | 'signalled';
export const RTP_LATCHING_MODES: readonly RtpLatching[] = ['nat', 'signalled'];

export interface ConnectionRecord {
  id: string;
  org_id: string;
  provider: ProviderName;
  host: string;
  port: number;
  transport: 'udp' | 'tcp' | 'tls';
  username: string | null;
  /** AES-256-GCM ciphertext (see telephony/secrets.ts); never returned to clients. */
  password_enc: string | null;
  inbound_cidrs: string[];
  status: 'active' | 'disabled';
  credentials_valid: boolean;
  /** Which RTP sources legs through this connection accept (telephony/rtp/source-latch.ts). */
  rtp_latching: RtpLatching;
  /** Secure trunks (migration 011): calls from it must come over TLS and offer SRTP. */
  require_secure: boolean;
  /** Mutual TLS: a client certificate from tls_client_ca (PEM; null: the listener's CA) with subject tls_client_subject (null: any). */
  require_client_cert: boolean;
  tls_client_ca: string | null;
  tls_client_subject: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface PhoneNumberRecord {
  id: string;
  org_id: string;
  number: string;
  connection_id: string | null;
  default_session_id: string | null;
  created_at: Date;
}

// Column lists of the call path's named statements (db.ts: why named, why not `*`).
const CONNECTION_COLUMNS =
  'id, org_id, provider, host, port, transport, username, password_enc, inbound_cidrs, status, credentials_valid, rtp_latching, require_secure, require_client_cert, tls_client_ca, tls_client_subject, created_at, updated_at';
const PHONE_NUMBER_COLUMNS = 'id, org_id, number, connection_id, default_session_id, created_at';
const CALL_COLUMNS =
  'id, session_id, org_id, party, direction, provider, call_sid, from_uri, to_uri, status, disconnect_reason, created_at, connected_at, ended_at';

export interface CreateConnectionInput {
  orgId: string;
  provider: ProviderName;
  host: string;
  port: number;
  transport: 'udp' | 'tcp' | 'tls';
  username?: string | null;
  passwordEnc?: string | null;
  inboundCidrs: string[];
  /** Default 'nat'. */
  rtpLatching?: RtpLatching;
  security?: ConnectionSecurity;
}

/** The secure-trunk settings of a connection (migration 011). */
export interface ConnectionSecurity {
  requireSecure?: boolean;
  requireClientCert?: boolean;
  tlsClientCa?: string | null;
  tlsClientSubject?: string | null;
}

export async function createConnection(db: DbClient, i: CreateConnectionInput): Promise<ConnectionRecord> {
  const { rows } = await db.query<ConnectionRecord>(
    `INSERT INTO provider_connections (id, org_id, provider, host, port, transport, username, password_enc, inbound_cidrs, rtp_latching,
                                       require_secure, require_client_cert, tls_client_ca, tls_client_subject)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
    [
      newId('pcon'),
      i.orgId,
      i.provider,
      i.host,
      i.port,
      i.transport,
      i.username ?? null,
      i.passwordEnc ?? null,
      i.inboundCidrs,
      i.rtpLatching ?? 'nat',
      i.security?.requireSecure ?? false,
      i.security?.requireClientCert ?? false,
      i.security?.tlsClientCa ?? null,
      i.security?.tlsClientSubject ?? null,
    ],
  );
  const row = rows[0];
  if (!row) throw new Error('INSERT provider_connections … RETURNING gave no row');
  return row;
}

/** Changes the settings given (undefined: unchanged); they apply to calls set up afterwards. */
export async function updateConnection(
  db: DbClient,
  id: string,
  u: ConnectionSecurity & { transport?: 'udp' | 'tcp' | 'tls'; rtpLatching?: RtpLatching },
): Promise<ConnectionRecord | null> {
  const { rows } = await db.query<ConnectionRecord>(
    `UPDATE provider_connections SET
       transport = COALESCE($2, transport),
       require_secure = COALESCE($3, require_secure),
       require_client_cert = COALESCE($4, require_client_cert),
       tls_client_ca = CASE WHEN $5::boolean THEN $6 ELSE tls_client_ca END,
       tls_client_subject = CASE WHEN $7::boolean THEN $8 ELSE tls_client_subject END,
       rtp_latching = COALESCE($9, rtp_latching),
       updated_at = now()
     WHERE id = $1 RETURNING *`,
    [
      id,
      u.transport ?? null,
      u.requireSecure ?? null,
      u.requireClientCert ?? null,
      u.tlsClientCa !== undefined,
      u.tlsClientCa ?? null,
      u.tlsClientSubject !== undefined,
      u.tlsClientSubject ?? null,
      u.rtpLatching ?? null,
    ],
  );
  return rows[0] ?? null;
}

export async function getConnection(db: DbClient, id: string): Promise<ConnectionRecord | null> {
  const { rows } = await db.query<ConnectionRecord>({
    name: 'voxbridge_get_connection',
    text: `SELECT ${CONNECTION_COLUMNS} FROM provider_connections WHERE id = $1`,
    values: [id],
  });
  return rows[0] ?? null;
}

export async function disableConnection(db: DbClient, id: string): Promise<ConnectionRecord | null> {
  const { rows } = await db.query<ConnectionRecord>(`UPDATE provider_connections SET status = 'disabled', updated_at = now() WHERE id = $1 RETURNING *`, [id]);
  return rows[0] ?? null;
}

export async function listActiveConnections(db: DbClient, orgId: string): Promise<ConnectionRecord[]> {
  const { rows } = await db.query<ConnectionRecord>(`SELECT * FROM provider_connections WHERE org_id = $1 AND status = 'active' ORDER BY created_at`, [orgId]);
  return rows;
}

export async function createPhoneNumber(
  db: DbClient,
  i: { orgId: string; number: string; connectionId: string | null; defaultSessionId?: string | null },
): Promise<PhoneNumberRecord> {
  const { rows } = await db.query<PhoneNumberRecord>(
    `INSERT INTO phone_numbers (id, org_id, number, connection_id, default_session_id) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [newId('pn'), i.orgId, i.number, i.connectionId, i.defaultSessionId ?? null],
  );
  const row = rows[0];
  if (!row) throw new Error('INSERT phone_numbers … RETURNING gave no row');
  return row;
}

export async function setNumberDefaultSession(db: DbClient, number: string, sessionId: string | null): Promise<PhoneNumberRecord | null> {
  const { rows } = await db.query<PhoneNumberRecord>('UPDATE phone_numbers SET default_session_id = $2 WHERE number = $1 RETURNING *', [number, sessionId]);
  return rows[0] ?? null;
}

export async function findPhoneNumber(db: DbClient, number: string): Promise<PhoneNumberRecord | null> {
  const { rows } = await db.query<PhoneNumberRecord>({
    name: 'voxbridge_find_phone_number',
    text: `SELECT ${PHONE_NUMBER_COLUMNS} FROM phone_numbers WHERE number = $1`,
    values: [number],
  });
  return rows[0] ?? null;
}

export interface TelephonySessionRecord {
  id: string;
  org_id: string;
  status: 'created' | 'active' | 'ended';
  mode: string;
  provider: string | null;
  phone_number: string | null;
  connection_id: string | null;
  routing: Record<string, unknown> | null;
  owner_node: string | null;
  sip_enabled: boolean;
  default_connection_id: string | null;
}

export async function getTelephonySession(db: DbClient, sessionId: string): Promise<TelephonySessionRecord | null> {
  const { rows } = await db.query<TelephonySessionRecord>(
    `SELECT s.id, s.org_id, s.status, s.mode, s.provider, s.phone_number, s.connection_id, s.routing, s.owner_node,
            o.sip_enabled, o.default_connection_id
       FROM sessions s JOIN organizations o ON o.id = s.org_id WHERE s.id = $1`,
    [sessionId],
  );
  return rows[0] ?? null;
}

/**
 * Sessions an inbound call to `number` may join, best first: open sessions routed to that number
 * (waiting `created` ones before `active` ones, oldest first), not ones routed outbound.
 */
export async function findSessionsWaitingForNumber(db: DbClient, orgId: string, number: string, limit = 20): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>({
    name: 'voxbridge_sessions_waiting_for_number',
    text: `SELECT id FROM sessions
      WHERE org_id = $1 AND phone_number = $2 AND status <> 'ended'
        AND coalesce(routing->>'direction', 'inbound') <> 'outbound'
      ORDER BY (status = 'created') DESC, created_at
      LIMIT $3`,
    values: [orgId, number, limit],
  });
  return rows.map((r) => r.id);
}

export async function isSessionOpen(db: DbClient, sessionId: string): Promise<boolean> {
  const { rows } = await db.query<{ status: string }>('SELECT status FROM sessions WHERE id = $1', [sessionId]);
  return rows[0] !== undefined && rows[0].status !== 'ended';
}

export interface CallRecord {
  id: string;
  session_id: string;
  org_id: string;
  party: 'agent' | 'customer';
  direction: 'inbound' | 'outbound';
  provider: string;
  call_sid: string;
  from_uri: string | null;
  to_uri: string | null;
  status: string;
  disconnect_reason: string | null;
  created_at: Date;
  connected_at: Date | null;
  ended_at: Date | null;
}

export async function insertCall(
  db: DbClient,
  i: {
    sessionId: string;
    orgId: string;
    party: 'agent' | 'customer';
    direction: 'inbound' | 'outbound';
    provider: string;
    callSid: string;
    from: string;
    to: string;
    status: string;
  },
): Promise<CallRecord> {
  const { rows } = await db.query<CallRecord>({
    name: 'voxbridge_insert_call',
    text: `INSERT INTO calls (id, session_id, org_id, party, direction, provider, call_sid, from_uri, to_uri, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${CALL_COLUMNS}`,
    values: [newId('call'), i.sessionId, i.orgId, i.party, i.direction, i.provider, i.callSid, i.from, i.to, i.status],
  });
  const row = rows[0];
  if (!row) throw new Error('INSERT calls … RETURNING gave no row');
  return row;
}

export async function markCallConnected(db: DbClient, callId: string, provider: string, sessionId: string): Promise<void> {
  await db.query(`UPDATE calls SET status = 'in-progress', connected_at = now() WHERE id = $1`, [callId]);
  await db.query('UPDATE sessions SET provider = $2 WHERE id = $1', [sessionId, provider]);
}

export async function markCallEnded(db: DbClient, callId: string, status: string, reason: string | null): Promise<CallRecord | null> {
  const { rows } = await db.query<CallRecord>(
    `UPDATE calls SET status = $2, disconnect_reason = $3, ended_at = now() WHERE id = $1 AND ended_at IS NULL RETURNING *`,
    [callId, status, reason],
  );
  return rows[0] ?? null;
}

export async function listSessionCalls(db: DbClient, sessionId: string): Promise<CallRecord[]> {
  const { rows } = await db.query<CallRecord>('SELECT * FROM calls WHERE session_id = $1 ORDER BY created_at', [sessionId]);
  return rows;
}

export async function getCallBySid(db: DbClient, callSid: string): Promise<CallRecord | null> {
  const { rows } = await db.query<CallRecord>('SELECT * FROM calls WHERE call_sid = $1', [callSid]);
  return rows[0] ?? null;
}

/**
 * A leg connected: the call row, the session's provider and the `session.provider.connected`
 * outbox event in one statement (one round trip, one transaction — the outbox rule holds).
 */
export async function recordCallConnected(
  db: DbClient,
  i: { callId: string; sessionId: string; orgId: string; provider: string; data: Record<string, unknown> },
): Promise<void> {
  await db.query({
    name: 'voxbridge_record_call_connected',
    text: `WITH c AS (UPDATE calls SET status = 'in-progress', connected_at = now() WHERE id = $1 RETURNING id),
          s AS (UPDATE sessions SET provider = $3 WHERE id = $2 RETURNING id)
     INSERT INTO webhook_events (id, org_id, type, data)
     SELECT $4, $5, 'session.provider.connected', $6 FROM c`,
    values: [i.callId, i.sessionId, i.provider, newId('evt'), i.orgId, i.data],
  });
}

/** One leg's end, as recordCallsEnded writes it; `data` is the `session.provider.disconnected` payload. */
export interface CallEnd {
  callId: string;
  orgId: string;
  status: string;
  reason: string;
  data: Record<string, unknown>;
}

/**
 * Legs ended: closes each call row (once) and, for those that had connected, writes
 * `session.provider.disconnected` — for a batch of calls in one statement (store/turn-batch.ts
 * collects the ends of one loop turn: a trunk dropping its calls is one commit, not one per call).
 * It is the only statement that locks several call rows, and each call ends once, so it cannot
 * deadlock with the others (a connected batch could, with the activations: see BENCHMARKS.md).
 * Returns the ids of the calls closed now; a call already ended is left alone. The
 * `calls.id = ANY(ARRAY(SELECT … FROM e))` condition is for the planner: it takes a recordset for 100
 * rows and would hash-join it against a sequential scan of calls; the id array makes it use the
 * primary key (EXPLAIN ANALYZE with 20,000 calls: 2.4–2.7 → 0.06–0.07 ms for one end).
 */
export async function recordCallsEnded(db: DbClient, ends: readonly CallEnd[]): Promise<string[]> {
  if (ends.length === 0) return [];
  const [only] = ends;
  if (ends.length === 1 && only) return recordOneCallEnded(db, only);
  const { rows } = await db.query<{ id: string }>({
    name: 'voxbridge_record_calls_ended',
    text: `WITH e AS (SELECT * FROM jsonb_to_recordset($1::jsonb)
                    AS e(call_id text, status text, reason text, event_id text, org_id text, data jsonb)),
          c AS (UPDATE calls SET status = e.status, disconnect_reason = e.reason, ended_at = now(),
                       quality = e.data #> '{provider,quality}'
                  FROM e WHERE calls.id = e.call_id AND calls.id = ANY(ARRAY(SELECT call_id FROM e)) AND calls.ended_at IS NULL
                RETURNING calls.id, calls.connected_at, e.event_id, e.org_id, e.data),
          d AS (INSERT INTO webhook_events (id, org_id, type, data)
                SELECT event_id, org_id, 'session.provider.disconnected', data FROM c WHERE connected_at IS NOT NULL)
     SELECT id FROM c`,
    values: [
      JSON.stringify(ends.map((e) => ({ call_id: e.callId, status: e.status, reason: e.reason, event_id: newId('evt'), org_id: e.orgId, data: e.data }))),
    ],
  });
  return rows.map((r) => r.id);
}

/**
 * recordCallsEnded for one call, as a plain UPDATE by id: ends spread over time come one per loop
 * turn, and the recordset statement cost PostgreSQL 5–25 % more CPU per call setup for them
 * (`bench/sip/setup-cost.ts` at 300 and 500 setups/s).
 */
async function recordOneCallEnded(db: DbClient, e: CallEnd): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>({
    name: 'voxbridge_record_call_ended',
    text: `WITH c AS (UPDATE calls SET status = $2, disconnect_reason = $3, ended_at = now(), quality = $6::jsonb #> '{provider,quality}'
                 WHERE id = $1 AND ended_at IS NULL RETURNING id, connected_at),
          d AS (INSERT INTO webhook_events (id, org_id, type, data)
                SELECT $4, $5, 'session.provider.disconnected', $6 FROM c WHERE c.connected_at IS NOT NULL)
     SELECT id FROM c`,
    values: [e.callId, e.status, e.reason, newId('evt'), e.orgId, e.data],
  });
  return rows.map((r) => r.id);
}

/** What session routing needs of a connection, looked up within the caller's organization. */
export interface RoutingConnection {
  id: string;
  provider: 'carrier_a' | 'carrier_b';
  status: 'active' | 'disabled';
  credentials_valid: boolean;
}

export async function getOrgConnection(db: DbClient, orgId: string, id: string): Promise<RoutingConnection | null> {
  const { rows } = await db.query<RoutingConnection>('SELECT id, provider, status, credentials_valid FROM provider_connections WHERE id = $1 AND org_id = $2', [
    id,
    orgId,
  ]);
  return rows[0] ?? null;
}

/** A managed number of the organization, with the connection that carries it (null: our SIP side). */
export async function getOrgPhoneNumber(db: DbClient, orgId: string, number: string): Promise<{ number: string; connection_id: string | null } | null> {
  const { rows } = await db.query<{ number: string; connection_id: string | null }>(
    'SELECT number, connection_id FROM phone_numbers WHERE number = $1 AND org_id = $2',
    [number, orgId],
  );
  return rows[0] ?? null;
}
