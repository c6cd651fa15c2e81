// Session rows for the API: the race-safe gated insert (with its outbox event), retrieval with the
// latest call leg, and the idle query the inactivity sweeper runs.
import type { SessionRow } from './session-rows.js';
import { newId } from '../ids.js';
import type { Db } from './db.js';

export interface NewSession {
  id: string;
  orgId: string;
  apiKeyId: string;
  mode: string;
  configurationMode: string | null;
  sourceLanguage: string | null;
  targetLanguage: string | null;
  provider: string;
  phoneNumber: string | null;
  connectionId: string | null;
  routing: Record<string, unknown> | null;
  audio: Record<string, unknown>;
  voice: Record<string, unknown>;
  recording: Record<string, unknown>;
  aiAgent: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
  ownerNode: string;
  createdAt: Date;
}

/**
 * Inserts the session and its `session.created` event in one statement, only while the
 * organization has fewer open (created|active) sessions than its max_concurrent_sessions.
 * Race-safe: `FOR UPDATE` on the organization row serializes concurrent creates of one
 * organization, and in READ COMMITTED a row locked after waiting is re-read at its newest
 * version, so the open_sessions counter (kept by a trigger, migration 002) is always current.
 * Returns false when the limit is reached.
 */
export async function insertSessionWithinLimit(db: Db, s: NewSession, eventData: Record<string, unknown>): Promise<boolean> {
  // Named (db.ts).
  const { rowCount } = await db.query({
    name: 'voxbridge_insert_session_within_limit',
    text: `WITH org AS (
       SELECT id FROM organizations WHERE id = $2 AND open_sessions < max_concurrent_sessions FOR UPDATE
     ), ins AS (
       INSERT INTO sessions (id, org_id, api_key_id, mode, configuration_mode, source_language, target_language, provider,
                             phone_number, connection_id, routing, audio, voice, recording, ai_agent, metadata, owner_node,
                             created_at, last_activity_at)
       SELECT $1, org.id, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18 FROM org
       RETURNING id, org_id
     ), evt AS (
       INSERT INTO webhook_events (id, org_id, type, data, created_at) SELECT $19, ins.org_id, 'session.created', $20, $18 FROM ins
     )
     SELECT id FROM ins`,
    values: [
      s.id,
      s.orgId,
      s.apiKeyId,
      s.mode,
      s.configurationMode,
      s.sourceLanguage,
      s.targetLanguage,
      s.provider,
      s.phoneNumber,
      s.connectionId,
      s.routing,
      s.audio,
      s.voice,
      s.recording,
      s.aiAgent,
      s.metadata,
      s.ownerNode,
      s.createdAt,
      newId('evt'),
      eventData,
    ],
  });
  return rowCount === 1;
}

export interface CallSummary {
  id: string;
  provider: string;
  call_sid: string;
  direction: string;
  status: string;
  from_uri: string | null;
  to_uri: string | null;
  /** Final RTP/RTCP quality, stored when the leg ended (null while live or when it never carried media). */
  quality: Record<string, unknown> | null;
}

/** The columns the API presents (retrieve, transcript, end summary); the rest stay in the database. */
export type SessionView = Pick<
  SessionRow,
  | 'id'
  | 'org_id'
  | 'status'
  | 'mode'
  | 'configuration_mode'
  | 'source_language'
  | 'target_language'
  | 'provider'
  | 'phone_number'
  | 'recording'
  | 'metadata'
  | 'duration_seconds'
  | 'created_at'
  | 'started_at'
  | 'ended_at'
>;

export type SessionWithCall = SessionView & { call: CallSummary | null };

/** The session of `orgId` (another organization's session is simply not found) with its latest call leg. */
export async function getSessionWithCall(db: Db, id: string, orgId: string): Promise<SessionWithCall | null> {
  // Only the presented columns: fewer fields to parse per row on the hottest read.
  const { rows } = await db.query<SessionWithCall>({
    name: 'voxbridge_get_session_with_call',
    text: `SELECT s.id, s.org_id, s.status, s.mode, s.configuration_mode, s.source_language, s.target_language, s.provider,
            s.phone_number, s.recording, s.metadata, s.duration_seconds, s.created_at, s.started_at, s.ended_at,
            (SELECT row_to_json(c) FROM (
              SELECT id, provider, call_sid, direction, status, from_uri, to_uri, quality FROM calls
               WHERE session_id = s.id ORDER BY created_at DESC, id DESC LIMIT 1) c) AS call
       FROM sessions s WHERE s.id = $1 AND s.org_id = $2`,
    values: [id, orgId],
  });
  return rows[0] ?? null;
}

/** Open sessions idle for at least `seconds` (SPEC "Limits": inactivity auto-end), oldest first. */
export async function findIdleSessions(db: Db, seconds: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM sessions WHERE status <> 'ended' AND last_activity_at <= now() - make_interval(secs => $1)
      ORDER BY last_activity_at LIMIT $2`,
    [seconds, limit],
  );
  return rows.map((r) => r.id);
}

export async function sessionExistsInOrg(db: Db, id: string, orgId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM sessions WHERE id = $1 AND org_id = $2', [id, orgId]);
  return !!rowCount;
}

/**
 * Records recording consent given after creation (it makes consent required); null when no such
 * session (in `orgId`, when given: the API scopes by organization, the operator's CLI does not).
 */
export async function recordRecordingConsent(
  db: Db,
  id: string,
  status: 'granted' | 'denied' | 'pending',
  orgId: string | null = null,
): Promise<Pick<SessionRow, 'id' | 'recording'> | null> {
  const { rows } = await db.query<Pick<SessionRow, 'id' | 'recording'>>(
    `UPDATE sessions SET recording = recording || jsonb_build_object('consent_required', true, 'consent_status', $2::text)
      WHERE id = $1 AND ($3::text IS NULL OR org_id = $3) RETURNING id, recording`,
    [id, status, orgId],
  );
  return rows[0] ?? null;
}

/** This node now runs the session (scale-out: commands and SIP legs for it are routed here). */
export async function setSessionOwner(db: Db, id: string, nodeId: string): Promise<void> {
  await db.query('UPDATE sessions SET owner_node = $2 WHERE id = $1', [id, nodeId]);
}

/** A party's language detected from speech; fills only a still-null language (a client's choice stays). */
export async function fillDetectedLanguage(db: Db, id: string, party: 'agent' | 'customer', language: string): Promise<void> {
  const column = party === 'agent' ? 'source_language' : 'target_language';
  await db.query(`UPDATE sessions SET ${column} = $2 WHERE id = $1 AND ${column} IS NULL`, [id, language]);
}

/** Last activity of many live sessions in one statement (the inactivity sweeper reads it). */
export async function touchSessions(db: Db, ids: readonly string[]): Promise<void> {
  await db.query(`UPDATE sessions SET last_activity_at = now() WHERE id = ANY($1::text[]) AND status <> 'ended'`, [ids]);
}
