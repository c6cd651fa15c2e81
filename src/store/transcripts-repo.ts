// Transcript turns of a session, in order (the pipeline appends them as finals arrive).
import type { Db } from './db.js';

export interface TranscriptTurnRow {
  sequence: number;
  speaker: string;
  language: string | null;
  text: string;
  translation: { language: string; text: string } | null;
  created_at: Date;
}

export async function listTranscriptTurns(db: Db, sessionId: string): Promise<TranscriptTurnRow[]> {
  const { rows } = await db.query<TranscriptTurnRow>(
    'SELECT sequence, speaker, language, text, translation, created_at FROM transcript_turns WHERE session_id = $1 ORDER BY sequence',
    [sessionId],
  );
  return rows;
}
