// Writes transcript turns as they happen (SPEC "Transcript object": the transcript builds in real
// time) and, in the same transaction, the `transcript.segment` outbox event (SPEC "Event types").
import { withTransaction, type Db } from './db.js';
import { insertEvent } from './outbox.js';

export interface TranscriptTurnInput {
  sessionId: string;
  orgId: string;
  /** 1-indexed, per session. */
  sequence: number;
  speaker: string;
  language: string;
  text: string;
  translation: { language: string; text: string } | null;
  confidence: number | null;
  /** Seconds from the session's first audio. */
  startTime: number;
  endTime: number;
  /** Agent modes: the agent's reply was cut off (barge-in); `text` is what was played. */
  interrupted?: boolean;
}

/** The segment id in `transcript.segment`: the transcript id (`trn_` + session id) and the turn's sequence. */
export const segmentId = (sessionId: string, sequence: number): string => `trn_${sessionId}_${sequence}`;

export async function insertTranscriptTurn(db: Db, t: TranscriptTurnInput): Promise<void> {
  await withTransaction(db, async (client) => {
    await client.query(
      `INSERT INTO transcript_turns (session_id, sequence, speaker, language, text, translation, confidence, start_time, end_time, interrupted)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [t.sessionId, t.sequence, t.speaker, t.language, t.text, t.translation, t.confidence, t.startTime, t.endTime, t.interrupted ?? false],
    );
    await insertEvent(client, t.orgId, 'transcript.segment', {
      session_id: t.sessionId,
      segment: {
        id: segmentId(t.sessionId, t.sequence),
        speaker: t.speaker,
        language: t.language,
        text: t.text,
        // SPEC types it as a string: the translated text, or '' when no translation ran.
        translation: t.translation?.text ?? '',
        start_time: t.startTime,
        end_time: t.endTime,
        is_final: true,
      },
    });
  });
}

/** Highest stored sequence of a session (0 when none), so a reopened session continues numbering. */
export async function lastTranscriptSequence(db: Db, sessionId: string): Promise<number> {
  const { rows } = await db.query<{ max: number | null }>('SELECT max(sequence) AS max FROM transcript_turns WHERE session_id = $1', [sessionId]);
  return rows[0]?.max ?? 0;
}
