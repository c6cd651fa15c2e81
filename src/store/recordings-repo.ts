// Recording rows for the API, scoped to the owning organization, with the parent session's consent flags.
import { withTransaction, type Db } from './db.js';
import { insertEvent } from './outbox.js';
import { finishPage, pageClause, type Page, type PageRequest } from './page.js';

export interface RecordingRow {
  id: string;
  session_id: string;
  org_id: string;
  channel: 'agent' | 'customer' | 'mixed';
  status: 'processing' | 'ready' | 'failed';
  format: string;
  duration: number | null;
  size: number | null;
  sample_rate: number;
  bit_depth: number;
  file_path: string | null;
  message: string | null;
  error: string | null;
  created_at: Date;
  expires_at: Date | null;
  capture_done: boolean;
  wav_path: string | null;
  attempts: number;
}

export type RecordingWithConsent = RecordingRow & { session_recording: { consent_required?: boolean; consent_status?: string } };

export async function getRecording(db: Db, orgId: string, id: string): Promise<RecordingWithConsent | null> {
  const { rows } = await db.query<RecordingWithConsent>(
    `SELECT r.*, s.recording AS session_recording FROM recordings r JOIN sessions s ON s.id = r.session_id
      WHERE r.id = $1 AND r.org_id = $2`,
    [id, orgId],
  );
  return rows[0] ?? null;
}

/** A page of one session's recordings (the caller has checked the session belongs to the organization). */
export async function listSessionRecordings(db: Db, sessionId: string, page: PageRequest): Promise<Page<RecordingRow>> {
  const clause = pageClause(page, 2);
  const { rows } = await db.query<RecordingRow>(
    `SELECT * FROM recordings WHERE session_id = $1 AND (expires_at IS NULL OR expires_at > now()) AND ${clause.where} ORDER BY ${clause.order} LIMIT ${page.limit + 1}`,
    [sessionId, ...clause.params],
  );
  return finishPage(page, rows);
}

export async function orgFeatures(db: Db, orgId: string): Promise<string[]> {
  const { rows } = await db.query<{ features: string[] }>('SELECT features FROM organizations WHERE id = $1', [orgId]);
  return rows[0]?.features ?? [];
}

/** Rows for channels being recorded now: `processing`, capture not done, the WAV path known. */
export async function insertCapturingRecordings(
  db: Db,
  sessionId: string,
  orgId: string,
  channels: { id: string; channel: string; wavPath: string }[],
): Promise<void> {
  await db.query(
    `INSERT INTO recordings (id, session_id, org_id, channel, status, format, wav_path, capture_done, message)
     SELECT u.id, $1, $2, u.channel, 'processing', 'mp3', u.wav_path, false, 'The call is being recorded.'
       FROM unnest($3::text[], $4::text[], $5::text[]) AS u(id, channel, wav_path)`,
    [sessionId, orgId, channels.map((c) => c.id), channels.map((c) => c.channel), channels.map((c) => c.wavPath)],
  );
}

export async function markCaptureDone(db: Db, ids: string[]): Promise<void> {
  await db.query(
    `UPDATE recordings SET capture_done = true, message = 'The recording is being encoded.' WHERE id = ANY($1::text[]) AND status = 'processing'`,
    [ids],
  );
}

/**
 * Claims up to `limit` recordings to encode (SKIP LOCKED, with a lease): those whose capture is
 * done, and those whose node died mid-call (session ended `graceSeconds` ago, capture never done).
 * A claim whose lease ran out (crashed encoder) is claimed again.
 */
export async function claimRecordingsToEncode(db: Db, leaseSeconds: number, graceSeconds: number, limit: number): Promise<RecordingRow[]> {
  const { rows } = await db.query<RecordingRow>(
    `UPDATE recordings r SET lease_until = now() + make_interval(secs => $1), attempts = r.attempts + 1
      WHERE r.id IN (
        SELECT r2.id FROM recordings r2 JOIN sessions s ON s.id = r2.session_id
         WHERE r2.status = 'processing' AND (r2.lease_until IS NULL OR r2.lease_until < now())
           AND (r2.capture_done OR (s.status = 'ended' AND s.ended_at < now() - make_interval(secs => $2)))
         ORDER BY r2.created_at LIMIT $3 FOR UPDATE OF r2 SKIP LOCKED)
      RETURNING r.*`,
    [leaseSeconds, graceSeconds, limit],
  );
  return rows;
}

export interface EncodedRecording {
  filePath: string;
  duration: number;
  size: number;
  sampleRate: number;
  bitDepth: number;
}

/** processing → ready with its `recording.ready` event (SPEC "Event types"); expires_at from the org's retention. */
export async function markRecordingReady(db: Db, id: string, e: EncodedRecording): Promise<RecordingRow | null> {
  return withTransaction(db, async (client) => {
    const { rows } = await client.query<RecordingRow>(
      `UPDATE recordings r SET status = 'ready', format = 'mp3', file_path = $2, duration = $3, size = $4, sample_rate = $5, bit_depth = $6,
              message = NULL, lease_until = NULL,
              expires_at = now() + make_interval(days => (SELECT recording_retention_days FROM organizations o WHERE o.id = r.org_id))
        WHERE id = $1 AND status = 'processing' RETURNING *`,
      [id, e.filePath, e.duration, e.size, e.sampleRate, e.bitDepth],
    );
    const r = rows[0];
    if (!r) return null;
    await insertEvent(client, r.org_id, 'recording.ready', {
      id: r.id,
      object: 'recording',
      session_id: r.session_id,
      channel: r.channel,
      duration: r.duration,
      format: r.format,
      size: r.size,
      download_url: `/v1/recordings/${r.id}/audio`,
    });
    return r;
  });
}

/** processing → failed with its `recording.failed` event. */
export async function markRecordingFailed(db: Db, id: string, message: string): Promise<boolean> {
  return withTransaction(db, async (client) => {
    const { rows } = await client.query<RecordingRow>(
      `UPDATE recordings SET status = 'failed', error = $2, message = NULL, lease_until = NULL WHERE id = $1 AND status = 'processing' RETURNING *`,
      [id, message],
    );
    const r = rows[0];
    if (!r) return false;
    await insertEvent(client, r.org_id, 'recording.failed', {
      session_id: r.session_id,
      error: { code: 'recording_generation_failed', message },
    });
    return true;
  });
}

/** Recordings past their expires_at that still have audio stored (the retention job deletes it). */
export async function listExpiredRecordingFiles(db: Db, limit: number): Promise<{ id: string; file_path: string }[]> {
  const { rows } = await db.query<{ id: string; file_path: string }>(
    `SELECT id, file_path FROM recordings WHERE expires_at <= now() AND file_path IS NOT NULL ORDER BY expires_at LIMIT $1`,
    [limit],
  );
  return rows;
}

export async function clearRecordingFile(db: Db, id: string): Promise<void> {
  await db.query('UPDATE recordings SET file_path = NULL WHERE id = $1', [id]);
}

/** The mixed recording of a session (the one session.ended names), if any. */
export async function sessionRecordingIds(db: Db, sessionId: string): Promise<{ id: string; channel: string; status: string }[]> {
  const { rows } = await db.query('SELECT id, channel, status FROM recordings WHERE session_id = $1 ORDER BY id', [sessionId]);
  return rows;
}

/** Gives a failed encode's row back to the queue at once (its next claim retries it). */
export async function releaseRecordingLease(db: Db, id: string): Promise<void> {
  await db.query('UPDATE recordings SET lease_until = NULL WHERE id = $1', [id]);
}
