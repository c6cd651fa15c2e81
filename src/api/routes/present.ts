// Row → API object. One function per object so every route returns the same shape (SPEC "Resources"),
// typed by the route's response schema (the compiler checks each presenter against it). Columns the
// database types loosely (jsonb, text enums) hold only what validated input wrote (session create,
// agent create/update, the call's final quality); they are asserted to their schema types here, by
// `stored()`, the one place rows become API objects.
import type { SessionRow } from '../../store/index.js';
import type { AgentRow, CallSummary, RecordingRow, SessionView, TranscriptTurnRow } from '../../store/index.js';
import type { Static } from '@sinclair/typebox';
import type { AgentObject } from '../schemas/agents.js';
import type { RecordingListItem, RecordingObject, RecordingProcessing } from '../schemas/recordings.js';
import type { CallObject, SessionCreated, SessionEnded, SessionRetrieved, TranscriptObject } from '../schemas/sessions.js';

type Session = Static<typeof SessionCreated>;
type Agent = Static<typeof AgentObject>;

/** A column's value as its schema type (see the header: written only from validated input). */
export function stored<T>(value: unknown): T {
  return value as T;
}

export interface StreamDetails {
  url: string;
  token: string;
  expires_at: string;
}

/** ws(s)://{publicUrl host}/v1/sessions/{id}/connect; wss when the public URL is https. */
export function streamUrl(publicUrl: string, sessionId: string): string {
  const u = new URL(publicUrl);
  return `${u.protocol === 'https:' ? 'wss' : 'ws'}://${u.host}/v1/sessions/${sessionId}/connect`;
}

type SessionFields = Pick<
  SessionRow,
  | 'id'
  | 'status'
  | 'mode'
  | 'configuration_mode'
  | 'source_language'
  | 'target_language'
  | 'provider'
  | 'phone_number'
  | 'recording'
  | 'metadata'
  | 'created_at'
>;

function sessionBase(s: SessionFields): Omit<Session, 'stream'> {
  return {
    id: s.id,
    object: 'session',
    status: s.status,
    mode: stored<Session['mode']>(s.mode),
    configuration_mode: s.configuration_mode,
    source_language: s.source_language,
    target_language: s.target_language,
    provider: s.provider ?? 'webrtc',
    ...(s.phone_number ? { phone_number: s.phone_number } : {}),
    recording: s.recording,
    metadata: stored<Session['metadata']>(s.metadata),
    created_at: s.created_at.toISOString(),
  };
}

/** The 201 body of POST /v1/sessions. */
export function presentCreatedSession(s: SessionFields, stream: StreamDetails): Session {
  return { ...sessionBase(s), stream };
}

export function presentCall(c: CallSummary): Static<typeof CallObject> {
  return {
    id: c.id,
    object: 'call',
    provider: c.provider,
    call_sid: c.call_sid,
    direction: c.direction,
    status: c.status,
    from: c.from_uri,
    to: c.to_uri,
    ...(c.quality ? { quality: stored<Static<typeof CallObject>['quality']>(c.quality) } : {}),
  };
}

/** GET /v1/sessions/{id}: started_at/ended_at always, call when a leg exists, stream only while active. */
export function presentSession(
  s: SessionFields & Pick<SessionRow, 'started_at' | 'ended_at'>,
  call: CallSummary | null,
  stream: StreamDetails | null,
): Static<typeof SessionRetrieved> {
  return {
    ...sessionBase(s),
    ...(call ? { call: presentCall(call) } : {}),
    ...(stream ? { stream } : {}),
    started_at: s.started_at ? s.started_at.toISOString() : null,
    ended_at: s.ended_at ? s.ended_at.toISOString() : null,
  };
}

export function presentEndedSession(s: SessionRow): Static<typeof SessionEnded> {
  return {
    id: s.id,
    object: 'session',
    status: 'ended',
    duration_seconds: Math.round((s.duration_seconds ?? 0) * 1000) / 1000,
    ended_at: (s.ended_at ?? new Date()).toISOString(),
  };
}

/** Seconds the session has run: its recorded duration once ended, the running time while active. */
export function sessionSeconds(s: Pick<SessionView, 'status' | 'duration_seconds' | 'started_at'>, now = Date.now()): number {
  if (s.status === 'ended') return Math.round((s.duration_seconds ?? 0) * 1000) / 1000;
  if (!s.started_at) return 0;
  return Math.max(0, Math.round(now - s.started_at.getTime()) / 1000);
}

export function presentTranscript(s: SessionView, turns: TranscriptTurnRow[]): Static<typeof TranscriptObject> {
  const languages: string[] = [];
  for (const t of turns) if (t.language && !languages.includes(t.language)) languages.push(t.language);
  return {
    id: `trn_${s.id}`,
    object: 'transcript',
    session_id: s.id,
    status: s.status === 'ended' ? 'completed' : 'in_progress',
    turns: turns.map((t) => ({
      sequence: t.sequence,
      speaker: t.speaker,
      language: t.language,
      text: t.text,
      ...(t.translation ? { translation: { language: t.translation.language, text: t.translation.text } } : {}),
      timestamp: t.created_at.toISOString(),
    })),
    metadata: { total_turns: turns.length, duration_seconds: sessionSeconds(s), languages_detected: languages },
  };
}

export function presentRecording(r: RecordingRow): Static<typeof RecordingObject> {
  return {
    id: r.id,
    object: 'recording',
    session_id: r.session_id,
    channel: r.channel,
    status: r.status,
    duration: r.duration,
    format: r.format,
    size: r.size,
    sample_rate: r.sample_rate,
    bit_depth: r.bit_depth,
    ...(r.status === 'ready' ? { download_url: `/v1/recordings/${r.id}/audio` } : {}),
    created_at: r.created_at.toISOString(),
    expires_at: r.expires_at ? r.expires_at.toISOString() : null,
  };
}

export function presentProcessingRecording(r: RecordingRow): Static<typeof RecordingProcessing> {
  return {
    id: r.id,
    object: 'recording',
    session_id: r.session_id,
    channel: r.channel,
    status: 'processing',
    message: r.message ?? 'The recording is being processed; retry in a few seconds.',
    created_at: r.created_at.toISOString(),
  };
}

export function presentRecordingItem(r: RecordingRow): Static<typeof RecordingListItem> {
  return {
    id: r.id,
    object: 'recording',
    session_id: r.session_id,
    duration: r.duration,
    format: r.format,
    status: r.status,
    created_at: r.created_at.toISOString(),
  };
}

export function presentAgent(a: AgentRow): Agent {
  return {
    id: a.id,
    object: 'agent',
    name: a.name,
    description: a.description,
    language: a.language,
    voice: stored<Agent['voice']>(a.voice),
    greeting: a.greeting,
    instructions: a.instructions,
    brain: stored<Agent['brain']>(a.brain),
    intents: stored<Agent['intents']>(a.intents),
    tools: stored<Agent['tools']>(a.tools),
    escalation: stored<Agent['escalation']>(a.escalation),
    knowledge_base: stored<Agent['knowledge_base']>(a.knowledge_base),
    metadata: stored<Agent['metadata']>(a.metadata),
    created_at: a.created_at.toISOString(),
    updated_at: a.updated_at.toISOString(),
  };
}

export function presentList<T, O>(url: string, page: { items: T[]; hasMore: boolean; nextCursor: string | null }, present: (item: T) => O) {
  return { object: 'list' as const, data: page.items.map(present), has_more: page.hasMore, next_cursor: page.nextCursor, url };
}
