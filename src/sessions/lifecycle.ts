// Session state transitions (SPEC.md "States and transitions"), each in one transaction with its
// outbox event; the statements are in store/session-rows.ts. REST, the socket, telephony and the
// sweepers all go through these functions.
import type { Redis } from 'ioredis';
import {
  activateSessionRows,
  insertEvent,
  lockSessionRow,
  markSessionEnded,
  primaryRecording,
  transcriptStats,
  withTransaction,
  type Db,
  type SessionRow,
} from '../store/index.js';
import { publishSessionCommand } from '../coord/index.js';
import { newId } from '../ids.js';

export interface LifecycleDeps {
  db: Db;
  redis: Redis;
  redisKeyPrefix: string;
}

/**
 * created → active on first audio: sets started_at and writes `session.started`, for every id in one
 * statement (see activateSessionRows). Returns the rows activated now; an id already active or ended
 * is left out.
 */
export function activateSessions(db: Db, ids: readonly string[]): Promise<SessionRow[]> {
  return activateSessionRows(
    db,
    ids.map((id) => ({ id, eventId: newId('evt') })),
  );
}

/** activateSessions for one session: its row when this call activated it, else null. */
export async function activateSession(db: Db, id: string): Promise<SessionRow | null> {
  return (await activateSessions(db, [id]))[0] ?? null;
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
    const current = await lockSessionRow(client, id, orgId);
    if (!current) return null;
    if (current.status === 'ended') return { row: current, endedNow: false };
    const s = await markSessionEnded(client, id, reason);
    // The transcript is final now (status `completed`): its figures go in `session.ended` and `transcript.ready`.
    const stats = await transcriptStats(client, id);
    // The mixed recording (still `processing`: it is encoded after the end). Its duration is the
    // session's, since every channel is padded to the call's length on the session timeline.
    const rec = await primaryRecording(client, id);
    const transcriptAvailable = stats.turns > 0;
    await insertEvent(client, s.org_id, 'session.ended', {
      id: s.id,
      object: 'session',
      status: 'ended',
      mode: s.mode,
      duration: s.duration_seconds,
      end_reason: reason,
      recording: rec ? { id: rec.id, duration: rec.duration ?? s.duration_seconds } : null,
      transcript: { available: transcriptAvailable, word_count: stats.words },
      started_at: s.started_at?.toISOString() ?? null,
      ended_at: s.ended_at!.toISOString(),
    });
    if (transcriptAvailable) {
      await insertEvent(client, s.org_id, 'transcript.ready', {
        session_id: s.id,
        word_count: stats.words,
        segment_count: stats.turns,
        duration: s.duration_seconds,
        languages: stats.languages,
      });
    }
    return { row: s, endedNow: true };
  });
  if (result?.endedNow) {
    await publishSessionCommand(deps.redis, deps.redisKeyPrefix, { kind: 'end', sessionId: id, reason });
  }
  return result;
}
