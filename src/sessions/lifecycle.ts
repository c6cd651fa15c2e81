// Session state transitions (SPEC.md "States and transitions"), each in one transaction with its
// outbox event. REST, the socket, telephony and the sweepers all go through these functions.
import type { Redis } from 'ioredis';
import { insertEvent, withTransaction, type Db } from '../store/index.js';
import { publishSessionCommand } from '../coord/session-bus.js';

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
  recording: { enabled: boolean; mode?: string; consent_required?: boolean; consent_status?: string };
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

export interface LifecycleDeps {
  db: Db;
  redis: Redis;
  redisKeyPrefix: string;
}

export async function getSessionRow(db: Db, id: string): Promise<SessionRow | null> {
  const { rows } = await db.query<SessionRow>('SELECT * FROM sessions WHERE id = $1', [id]);
  return rows[0] ?? null;
}

/**
 * created → active on first audio: sets started_at and writes `session.started`.
 * Returns the row when this call activated it, null when it was already active or ended.
 */
export async function activateSession(db: Db, id: string): Promise<SessionRow | null> {
  return withTransaction(db, async (client) => {
    const { rows } = await client.query<SessionRow>(
      `UPDATE sessions SET status = 'active', started_at = now(), last_activity_at = now()
        WHERE id = $1 AND status = 'created' RETURNING *`,
      [id],
    );
    const s = rows[0];
    if (!s) return null;
    await insertEvent(client, s.org_id, 'session.started', {
      id: s.id, object: 'session', status: s.status, mode: s.mode,
      source_language: s.source_language, target_language: s.target_language, started_at: s.started_at!.toISOString(),
    });
    return s;
  });
}

/** Records activity (audio, messages) for the 30-minute inactivity rule. */
export async function touchSession(db: Db, id: string): Promise<void> {
  await db.query(`UPDATE sessions SET last_activity_at = now() WHERE id = $1 AND status <> 'ended'`, [id]);
}

export interface EndedSession {
  row: SessionRow;
  /** False when the session had already ended (idempotent end). */
  endedNow: boolean;
}

/**
 * created|active → ended: sets ended_at, duration (billing stops: session seconds go to
 * session_usage), writes `session.ended` and tells the owning node to close its live session.
 * Idempotent: an ended session is returned as it is. Null when the session does not exist
 * (or belongs to another organization when `orgId` is given).
 */
export async function endSession(deps: LifecycleDeps, id: string, reason: string, orgId?: string): Promise<EndedSession | null> {
  const result = await withTransaction(deps.db, async (client) => {
    const { rows } = await client.query<SessionRow>(
      'SELECT * FROM sessions WHERE id = $1 AND ($2::text IS NULL OR org_id = $2) FOR UPDATE',
      [id, orgId ?? null],
    );
    const current = rows[0];
    if (!current) return null;
    if (current.status === 'ended') return { row: current, endedNow: false };
    // Billing is by session duration: from activation (or creation if never active) to the end.
    const { rows: ended } = await client.query<SessionRow>(
      `UPDATE sessions SET status = 'ended', ended_at = now(), end_reason = $2,
              duration_seconds = GREATEST(0, EXTRACT(EPOCH FROM (now() - COALESCE(started_at, created_at))))
        WHERE id = $1 RETURNING *`,
      [id, reason],
    );
    const s = ended[0];
    await client.query('INSERT INTO session_usage (session_id, org_id, seconds) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [s.id, s.org_id, s.duration_seconds]);
    // The transcript is final now (status `completed`): its figures go in `session.ended` and `transcript.ready`.
    const { rows: stats } = await client.query<{ turns: number; words: number; languages: string[] }>(
      `SELECT count(*)::int AS turns, COALESCE(sum(array_length(regexp_split_to_array(trim(text), '\\s+'), 1)), 0)::int AS words,
              COALESCE(array_agg(DISTINCT language) FILTER (WHERE language IS NOT NULL), '{}') AS languages
         FROM transcript_turns WHERE session_id = $1 AND trim(text) <> ''`,
      [id],
    );
    // The mixed recording (still `processing`: it is encoded after the end). Its duration is the
    // session's, since every channel is padded to the call's length on the session timeline.
    const { rows: recs } = await client.query<{ id: string; duration: number | null }>(
      `SELECT id, duration FROM recordings WHERE session_id = $1 ORDER BY (channel = 'mixed') DESC, id LIMIT 1`,
      [id],
    );
    const transcriptAvailable = stats[0].turns > 0;
    await insertEvent(client, s.org_id, 'session.ended', {
      id: s.id, object: 'session', status: 'ended', mode: s.mode,
      duration: s.duration_seconds, end_reason: reason,
      recording: recs[0] ? { id: recs[0].id, duration: recs[0].duration ?? s.duration_seconds } : null,
      transcript: { available: transcriptAvailable, word_count: stats[0].words },
      started_at: s.started_at?.toISOString() ?? null, ended_at: s.ended_at!.toISOString(),
    });
    if (transcriptAvailable) {
      await insertEvent(client, s.org_id, 'transcript.ready', {
        session_id: s.id, word_count: stats[0].words, segment_count: stats[0].turns,
        duration: s.duration_seconds, languages: stats[0].languages,
      });
    }
    return { row: s, endedNow: true };
  });
  if (result?.endedNow) {
    await publishSessionCommand(deps.redis, deps.redisKeyPrefix, { kind: 'end', sessionId: id, reason });
  }
  return result;
}
