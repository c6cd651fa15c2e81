// Row → API object. One function per object so every route returns the same shape (SPEC "Resources").
import type { SessionRow } from '../../store/index.js';
import type { AgentRow, CallSummary, RecordingRow, SessionView, TranscriptTurnRow } from '../../store/index.js';

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

function sessionBase(s: SessionFields): Record<string, unknown> {
  return {
    id: s.id,
    object: 'session',
    status: s.status,
    mode: s.mode,
    configuration_mode: s.configuration_mode,
    source_language: s.source_language,
    target_language: s.target_language,
    provider: s.provider ?? 'webrtc',
    ...(s.phone_number ? { phone_number: s.phone_number } : {}),
    recording: s.recording,
    metadata: s.metadata,
    created_at: s.created_at.toISOString(),
  };
}

/** The 201 body of POST /v1/sessions. */
export function presentCreatedSession(s: SessionFields, stream: StreamDetails): Record<string, unknown> {
  return { ...sessionBase(s), stream };
}

export function presentCall(c: CallSummary): Record<string, unknown> {
  return {
    id: c.id,
    object: 'call',
    provider: c.provider,
    call_sid: c.call_sid,
    direction: c.direction,
    status: c.status,
    from: c.from_uri,
    to: c.to_uri,
    ...(c.quality ? { quality: c.quality } : {}),
  };
}

/** GET /v1/sessions/{id}: started_at/ended_at always, call when a leg exists, stream only while active. */
export function presentSession(
  s: SessionFields & Pick<SessionRow, 'started_at' | 'ended_at'>,
  call: CallSummary | null,
  stream: StreamDetails | null,
): Record<string, unknown> {
  return {
    ...sessionBase(s),
    ...(call ? { call: presentCall(call) } : {}),
    ...(stream ? { stream } : {}),
    started_at: s.started_at ? s.started_at.toISOString() : null,
    ended_at: s.ended_at ? s.ended_at.toISOString() : null,
  };
}

export function presentEndedSession(s: SessionRow): Record<string, unknown> {
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

export function presentTranscript(s: SessionView, turns: TranscriptTurnRow[]): Record<string, unknown> {
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

export function presentRecording(r: RecordingRow): Record<string, unknown> {
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

export function presentProcessingRecording(r: RecordingRow): Record<string, unknown> {
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

export function presentRecordingItem(r: RecordingRow): Record<string, unknown> {
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

export function presentAgent(a: AgentRow): Record<string, unknown> {
  return {
    id: a.id,
    object: 'agent',
    name: a.name,
    description: a.description,
    language: a.language,
    voice: a.voice,
    greeting: a.greeting,
    instructions: a.instructions,
    brain: a.brain,
    intents: a.intents,
    tools: a.tools,
    escalation: a.escalation,
    knowledge_base: a.knowledge_base,
    metadata: a.metadata,
    created_at: a.created_at.toISOString(),
    updated_at: a.updated_at.toISOString(),
  };
}

export function presentList<T>(url: string, page: { items: T[]; hasMore: boolean; nextCursor: string | null }, present: (item: T) => Record<string, unknown>) {
  return { object: 'list' as const, data: page.items.map(present), has_more: page.hasMore, next_cursor: page.nextCursor, url };
}
