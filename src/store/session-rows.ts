// The sessions table: its row type and the statements the lifecycle (sessions/lifecycle.ts) runs
// inside its transactions. State rules live in the lifecycle; this file only reads and writes rows.
import type { Db, DbClient } from './db.js';

export interface SessionRow {
  id: string;
  org_id: string;
  api_key_id: string | null;
  status: 'created' | 'active' | 'ended';
  mode: string;
  configuration_mode: string | null;
  source_language: string | null;
  target_language: string | null;
  provider: string | null;
  phone_number: string | null;
  connection_id: string | null;
  routing: Record<string, unknown> | null;
  audio: { sample_rate_hz: number; encoding: string; channels: number };
  voice: { voice_id?: string; stability: number; similarity_boost: number; speed: number };
  /** Session create writes all four; the consent update only changes the last two. */
  recording: { enabled: boolean; mode: string; consent_required: boolean; consent_status: string };
  ai_agent: { id: string; overrides?: Record<string, unknown> } | null;
  metadata: Record<string, unknown> | null;
  owner_node: string | null;
  end_reason: string | null;
  duration_seconds: number | null;
  created_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
  last_activity_at: Date;
}

type Queryable = Db | DbClient;

// Every SessionRow column, for the named statements below (db.ts: why named, why not `*`); they run
// for every session (socket connect, activation, end).
const SESSION_COLUMNS =
  'id, org_id, api_key_id, status, mode, configuration_mode, source_language, target_language, provider, phone_number, connection_id, routing, audio, voice, recording, ai_agent, metadata, owner_node, end_reason, duration_seconds, created_at, started_at, ended_at, last_activity_at';

export async function getSessionRow(db: Queryable, id: string): Promise<SessionRow | null> {
  const { rows } = await db.query<SessionRow>({
    name: 'voxbridge_get_session_row',
    text: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`,
    values: [id],
  });
  return rows[0] ?? null;
}

/**
 * Locks session rows for a state change, in id order (two batches locking overlapping sessions
 * cannot deadlock); absent ids and (with orgId) another organization's are left out.
 */
export async function lockSessionRows(client: DbClient, ids: readonly string[], orgId?: string): Promise<SessionRow[]> {
  const { rows } = await client.query<SessionRow>({
    name: 'voxbridge_lock_session_rows',
    text: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ANY($1::text[]) AND ($2::text IS NULL OR org_id = $2) ORDER BY id FOR UPDATE`,
    values: [ids, orgId ?? null],
  });
  return rows;
}

/**
 * created → active for a batch of sessions, each with its `session.started` outbox event, in one
 * statement (one round trip, one transaction, one commit: the outbox rule holds). Calls' first audio
 * runs this (batched by store/turn-batch.ts): a statement per call, a commit and a NOTIFY
 * each, made 200 calls starting together a 1–2 s stall of the whole host. The event's `started_at` is
 * the row's, in toISOString's form (milliseconds, truncated as the pg driver's Date is). Returns the
 * rows activated now: a session no longer in `created` is left out.
 */
export async function activateSessionRows(db: Queryable, activations: ReadonlyArray<{ id: string; eventId: string }>): Promise<SessionRow[]> {
  if (activations.length === 0) return [];
  const { rows } = await db.query<SessionRow>({
    name: 'voxbridge_activate_sessions',
    text: `WITH a AS (SELECT * FROM unnest($1::text[], $2::text[]) AS a(session_id, event_id)),
          s AS (UPDATE sessions SET status = 'active', started_at = now(), last_activity_at = now()
                  FROM a WHERE sessions.id = a.session_id AND sessions.status = 'created'
                RETURNING ${SESSION_COLUMNS}, a.event_id),
          e AS (INSERT INTO webhook_events (id, org_id, type, data)
                SELECT s.event_id, s.org_id, 'session.started',
                       jsonb_build_object('id', s.id, 'object', 'session', 'status', s.status, 'mode', s.mode,
                         'source_language', s.source_language, 'target_language', s.target_language,
                         'started_at', to_char(s.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                  FROM s)
     SELECT ${SESSION_COLUMNS} FROM s`,
    values: [activations.map((a) => a.id), activations.map((a) => a.eventId)],
  });
  return rows;
}

/** Records activity (audio, messages) for the 30-minute inactivity rule. */
export async function touchSession(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE sessions SET last_activity_at = now() WHERE id = $1 AND status <> 'ended'`, [id]);
}

/**
 * → ended for a batch of locked sessions (lockSessionRows), each with its own reason and billed
 * duration: from activation (or creation if never active) to now; the seconds go to session_usage
 * once. One statement whatever the batch size.
 */
export async function markSessionsEnded(client: DbClient, ends: ReadonlyArray<{ id: string; reason: string }>): Promise<SessionRow[]> {
  if (ends.length === 0) return [];
  const { rows } = await client.query<SessionRow>({
    name: 'voxbridge_end_sessions',
    text: `WITH e AS (SELECT * FROM unnest($1::text[], $2::text[]) AS e(session_id, reason)),
          s AS (UPDATE sessions SET status = 'ended', ended_at = now(), end_reason = e.reason,
                  duration_seconds = GREATEST(0, EXTRACT(EPOCH FROM (now() - COALESCE(started_at, created_at))))
                  FROM e WHERE sessions.id = e.session_id
                RETURNING ${SESSION_COLUMNS}),
          u AS (INSERT INTO session_usage (session_id, org_id, seconds) SELECT id, org_id, duration_seconds FROM s ON CONFLICT DO NOTHING)
     SELECT ${SESSION_COLUMNS} FROM s`,
    values: [ends.map((e) => e.id), ends.map((e) => e.reason)],
  });
  if (rows.length !== ends.length) throw new Error(`${ends.length - rows.length} locked session(s) vanished while ending`);
  return rows;
}

export interface TranscriptStats {
  turns: number;
  words: number;
  languages: string[];
}

/** Transcript turns, words and languages per session (for the `session.ended` summary); sessions without turns are absent. */
export async function transcriptStatsOf(client: Queryable, sessionIds: readonly string[]): Promise<Map<string, TranscriptStats>> {
  const { rows } = await client.query<TranscriptStats & { session_id: string }>(
    `SELECT session_id, count(*)::int AS turns, COALESCE(sum(array_length(regexp_split_to_array(trim(text), '\\s+'), 1)), 0)::int AS words,
            COALESCE(array_agg(DISTINCT language) FILTER (WHERE language IS NOT NULL), '{}') AS languages
       FROM transcript_turns WHERE session_id = ANY($1::text[]) AND trim(text) <> '' GROUP BY session_id`,
    [sessionIds],
  );
  return new Map(rows.map(({ session_id, ...stats }) => [session_id, stats]));
}

/** The recording each session's summary points at: the mixed one when there is one; sessions without recordings are absent. */
export async function primaryRecordings(client: Queryable, sessionIds: readonly string[]): Promise<Map<string, { id: string; duration: number | null }>> {
  const { rows } = await client.query<{ session_id: string; id: string; duration: number | null }>(
    `SELECT DISTINCT ON (session_id) session_id, id, duration FROM recordings
      WHERE session_id = ANY($1::text[]) ORDER BY session_id, (channel = 'mixed') DESC, id`,
    [sessionIds],
  );
  return new Map(rows.map(({ session_id, ...rec }) => [session_id, rec]));
}
