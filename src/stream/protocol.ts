// The socket's message protocol (SPEC "Streaming socket messages"), validated at the edge: every
// client message is parsed here into a typed command or a socket error code; inside, we trust it.
import type { Party } from '../sessions/index.js';

export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  /** RFC 6455 §7.4.1 / IANA registry: "Try Again Later"; here: the session is live on another node, or the media path is overloaded. */
  tryAgainLater: 1013,
  tokenInvalid: 4001,
  sessionNotFound: 4004,
  streamAlreadyActive: 4009,
  sessionEnded: 4010,
  rateLimited: 4029,
  serverError: 4500,
} as const;

export type SocketErrorCode = 'invalid_audio_format' | 'invalid_message' | 'message_too_large' | 'engine_unavailable' | 'engine_error';

export type ClientMessage =
  | { type: 'audio.input'; speaker: Party | { channel: string }; payload: Buffer; sequence?: number; timestampMs?: number }
  | { type: 'ping' }
  | { type: 'session.end' };

export type ParseResult = { ok: true; msg: ClientMessage } | { ok: false; code: SocketErrorCode; message: string };

/**
 * Base64 to bytes, or null when it is not base64. Node's decoder skips characters outside the
 * alphabet, so a payload with any is caught by its decoded length (cheaper than a regex per message).
 */
function decodeBase64Strict(text: string): Buffer | null {
  if (text.length % 4 !== 0) return null;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === (text.length / 4) * 3 - padding ? bytes : null;
}

const fail = (code: SocketErrorCode, message: string): ParseResult => ({ ok: false, code, message });

/**
 * Parses one client message. `maxBytes` is the documented ceiling (limits.socketMessageMaxBytes);
 * larger messages are answered with `message_too_large` and the connection stays open.
 */
export function parseClientMessage(data: Buffer, maxBytes: number): ParseResult {
  if (data.length > maxBytes) return fail('message_too_large', `message of ${data.length} bytes exceeds the ${maxBytes}-byte ceiling`);
  let m: unknown;
  try {
    m = JSON.parse(data.toString('utf8'));
  } catch {
    return fail('invalid_message', 'message is not valid JSON');
  }
  if (!m || typeof m !== 'object' || Array.isArray(m)) return fail('invalid_message', 'message must be a JSON object');
  const type = (m as { type?: unknown }).type;
  if (typeof type !== 'string') return fail('invalid_message', "message has no string 'type'");
  switch (type) {
    case 'ping':
      return { ok: true, msg: { type: 'ping' } };
    case 'session.end':
      return { ok: true, msg: { type: 'session.end' } };
    case 'audio.input':
      return parseAudioInput(m as Record<string, unknown>);
    default:
      return fail('invalid_message', `unknown message type '${type.slice(0, 64)}'`);
  }
}

/** A channel id a client may name in `audio.input.speaker` instead of a party. */
export const CHANNEL_ID = /^[A-Za-z0-9_.:-]{1,32}$/;

function parseAudioInput(m: Record<string, unknown>): ParseResult {
  // `speaker` names the party talking (absent means the customer, the usual single-party client) or
  // a channel id, which the connection maps to a party (stream-connection.ts, README "Messages").
  const raw = m.speaker ?? 'customer';
  if (typeof raw !== 'string' || !(raw === 'agent' || raw === 'customer' || CHANNEL_ID.test(raw))) {
    return fail('invalid_message', "audio.input 'speaker' must be 'agent', 'customer' or a channel id of 1 to 32 characters [A-Za-z0-9_.:-]");
  }
  const speaker: Party | { channel: string } = raw === 'agent' || raw === 'customer' ? raw : { channel: raw };
  if (m.sequence !== undefined && typeof m.sequence !== 'number') return fail('invalid_message', "audio.input 'sequence' must be a number");
  if (m.timestamp_ms !== undefined && typeof m.timestamp_ms !== 'number') return fail('invalid_message', "audio.input 'timestamp_ms' must be a number");
  const audio = m.audio as Record<string, unknown> | undefined;
  if (!audio || typeof audio !== 'object')
    return fail('invalid_audio_format', "audio.input needs an 'audio' object (encoding 'mulaw', sample_rate_hz 8000, payload base64)");
  if (audio.encoding !== 'mulaw') return fail('invalid_audio_format', `audio encoding must be 'mulaw', got ${JSON.stringify(audio.encoding)?.slice(0, 32)}`);
  if (audio.sample_rate_hz !== 8000)
    return fail('invalid_audio_format', `audio sample_rate_hz must be 8000, got ${JSON.stringify(audio.sample_rate_hz)?.slice(0, 32)}`);
  if (audio.channels !== undefined && audio.channels !== 1) return fail('invalid_audio_format', 'audio must be mono (channels 1)');
  const payload = audio.payload;
  const bytes = typeof payload === 'string' ? decodeBase64Strict(payload) : null;
  if (!bytes) return fail('invalid_audio_format', 'audio payload must be base64-encoded mu-law bytes');
  return {
    ok: true,
    msg: {
      type: 'audio.input',
      speaker,
      payload: bytes,
      ...(typeof m.sequence === 'number' ? { sequence: m.sequence } : {}),
      ...(typeof m.timestamp_ms === 'number' ? { timestampMs: m.timestamp_ms } : {}),
    },
  };
}

// Server → client messages.

export const readyMessage = (sessionId: string): string => JSON.stringify({ type: 'session.ready', session_id: sessionId });
export const pongMessage = (sessionId: string): string => JSON.stringify({ type: 'pong', session_id: sessionId });
export const endedMessage = (sessionId: string, reason: string): string => JSON.stringify({ type: 'session.ended', session_id: sessionId, reason });
export const errorMessage = (sessionId: string, code: SocketErrorCode, message: string): string =>
  JSON.stringify({ type: 'session.error', session_id: sessionId, error: { code, message } });
