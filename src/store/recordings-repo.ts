// Recording rows for the API, scoped to the owning organization, with the parent session's consent flags.
import type { Db } from './db.js';
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
    `SELECT * FROM recordings WHERE session_id = $1 AND ${clause.where} ORDER BY ${clause.order} LIMIT ${page.limit + 1}`,
    [sessionId, ...clause.params],
  );
  return finishPage(page, rows);
}
