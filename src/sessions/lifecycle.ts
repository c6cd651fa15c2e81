// Session state transitions (SPEC.md "States and transitions"), each in one transaction with its
// outbox event; the statements are in store/session-rows.ts. REST, the socket, telephony and the
// sweepers all go through these functions.
import type { Redis } from 'ioredis';
import {
  activateSessionRows,
  insertEvents,
  lockSessionRows,
  markSessionsEnded,
  primaryRecordings,
  transcriptStatsOf,
  withTransaction,
  type Db,
  type NewEvent,
  type SessionRow,
  type TranscriptStats,
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

export interface SessionEnd {
  id: string;
  reason: string;
}

/**
 * created|active → ended: sets ended_at, duration (billing stops: session seconds go to
 * session_usage), writes `session.ended` and tells the owning node to close its live session.
 * Idempotent: an ended session is returned as it is. Null when the session does not exist
 * (or belongs to another organization when `orgId` is given).
 */
export async function endSession(deps: LifecycleDeps, id: string, reason: string, orgId?: string): Promise<EndedSession | null> {
  return (await endSessions(deps, [{ id, reason }], orgId)).get(id) ?? null;
}

/**
 * endSession for a batch, in one transaction with a statement per step whatever its size: the
 * sessions of a mass hang-up reach their reconnect grace together, and one transaction each
 * (six statements, a commit and a NOTIFY) for hundreds of them stalled the whole host. An id given
 * twice keeps its first reason; ids absent (or another organization's) are absent from the result.
 */
export async function endSessions(deps: LifecycleDeps, ends: readonly SessionEnd[], orgId?: string): Promise<Map<string, EndedSession>> {
  const reasons = new Map<string, string>();
  for (const e of ends) if (!reasons.has(e.id)) reasons.set(e.id, e.reason);
  if (reasons.size === 0) return new Map();
  const result = await withTransaction(deps.db, async (client) => {
    const out = new Map<string, EndedSession>();
    const toEnd: SessionEnd[] = [];
    for (const row of await lockSessionRows(client, [...reasons.keys()], orgId)) {
      if (row.status === 'ended') out.set(row.id, { row, endedNow: false });
      else toEnd.push({ id: row.id, reason: reasons.get(row.id)! });
    }
    if (toEnd.length === 0) return out;
    const ended = await markSessionsEnded(client, toEnd);
    const ids = ended.map((s) => s.id);
    // The transcripts are final now (status `completed`): their figures go in `session.ended` and `transcript.ready`.
    const stats = await transcriptStatsOf(client, ids);
    // The mixed recording (still `processing`: it is encoded after the end). Its duration is the
    // session's, since every channel is padded to the call's length on the session timeline.
    const recordings = await primaryRecordings(client, ids);
    await insertEvents(
      client,
      ended.flatMap((s) => endEvents(s, stats.get(s.id), recordings.get(s.id))),
    );
    for (const s of ended) out.set(s.id, { row: s, endedNow: true });
    return out;
  });
  await Promise.all(
    [...result.values()]
      .filter((r) => r.endedNow)
      .map(({ row }) => publishSessionCommand(deps.redis, deps.redisKeyPrefix, { kind: 'end', sessionId: row.id, reason: row.end_reason ?? '' })),
  );
  return result;
}

/** `session.ended`, and `transcript.ready` when the session has a transcript. */
function endEvents(s: SessionRow, stats: TranscriptStats | undefined, rec: { id: string; duration: number | null } | undefined): NewEvent[] {
  const events: NewEvent[] = [
    {
      orgId: s.org_id,
      type: 'session.ended',
      data: {
        id: s.id,
        object: 'session',
        status: 'ended',
        mode: s.mode,
        duration: s.duration_seconds,
        end_reason: s.end_reason,
        recording: rec ? { id: rec.id, duration: rec.duration ?? s.duration_seconds } : null,
        transcript: { available: !!stats, word_count: stats?.words ?? 0 },
        started_at: s.started_at?.toISOString() ?? null,
        ended_at: s.ended_at!.toISOString(),
      },
    },
  ];
  if (stats) {
    events.push({
      orgId: s.org_id,
      type: 'transcript.ready',
      data: { session_id: s.id, word_count: stats.words, segment_count: stats.turns, duration: s.duration_seconds, languages: stats.languages },
    });
  }
  return events;
}
